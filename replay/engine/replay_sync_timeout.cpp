// A condition wait of a parallel trace that timed out in the recording.
//
// Replay runs a timed futex wait without its deadline (replay_sync.cpp)
// and used to end it only at the call's acquire event, its return. But a
// condition waiter that times out changes the condition variable right
// away (glibc takes it out of its group of waiters), long before it gets
// its mutex back and returns: a signal sent in between goes to the waiters
// still counted, and woke another thread in replay than in the recording.
// The recorded futex wait that ended with ETIMEDOUT has its place in the
// global order; there the replay ends the wait with ETIMEDOUT and steps the
// thread through glibc's cancellation, up to the instruction that would
// take the mutex, which is its acquire event's business.
#include <sys/syscall.h>

#include <cerrno>
#include <csignal>

#include "event_format.h"
#include "replayer.h"
#include "steady_now.h"
#include "sync_calls.h"
#include "text.h"

namespace rw::replay {
namespace {

constexpr auto kSettle = std::chrono::milliseconds(5);

bool condition_wait(uint32_t fn)
{
    return fn == RW_SYNC_COND_WAIT || fn == RW_SYNC_COND_TIMEDWAIT;
}

} // namespace

void Replayer::on_recorded_timeout(const SyscallEvent& e)
{
    if (e.nr != SYS_futex || e.ret != -ETIMEDOUT)
        return;
    auto it = in_sync_call_.find(e.tid);
    if (it == in_sync_call_.end() || !condition_wait(it->second.fn) || !it->second.in_syscall ||
        it->second.futex_addr != e.args[0] || !it->second.mutex || is_parked(e.tid))
        return;
    Task* t = find_task(e.tid);
    if (!t || t->at != Task::At::Running)
        return;
    SyncCallState& call = it->second;
    // Asleep in its wait (the usual case); or woken by a wake-up meant for
    // another waiter, and on its way to, or at, its futex's exit.
    std::optional<StopInfo> stop = waiter_.take(t->tid());
    for (auto deadline = steady_now() + options_.watchdog; !stop;) {
        if (asleep_in_futex(t->tid())) {
            stop = time_out_wait(*t, "the timeout of the wait in " + std::string(sync_call_name(call.fn)));
            break;
        }
        if (steady_now() > deadline)
            return; // neither: its acquire event ends it, as before
        stop = waiter_.wait_for(t->tid(), kSettle);
    }
    t->at = stop->kind == StopInfo::Kind::SyscallStop ? Task::At::SyscallExit : Task::At::SignalStop;
    if (stop->kind != StopInfo::Kind::SyscallStop || static_cast<int64_t>(t->regs()[Registers::ORIG_RAX]) != SYS_futex)
        diverge(*t, "inside " + std::string(sync_call_name(call.fn)) +
                        ", where the recording's wait timed out: " + describe_stop(*t, *stop));
    // Woken, it still timed out in the recording.
    Registers r = t->regs();
    r[Registers::RAX] = static_cast<uint64_t>(-ETIMEDOUT);
    t->set_regs(r);
    call.blocked = false;
    call.timed_out = true;
    step_sync_call(*t, call, *stop); // the futex's exit
    step_to_mutex_lock(*t, call);
}

StopInfo Replayer::time_out_wait(Task& t, const std::string& what)
{
    // An interrupt takes the thread out of the futex, and at the futex's
    // exit ETIMEDOUT replaces the restart (the interrupt's own stop is
    // then ours, not delivered).
    interrupt_tid_ = t.tid();
    interrupt_sent_ = ::syscall(SYS_tgkill, t.group().tgid, t.tid(), SIGSTOP) == 0;
    StopInfo s = wait_stop(t, what);
    if (s.kind == StopInfo::Kind::SyscallStop) {
        Registers r = t.regs();
        r[Registers::RAX] = static_cast<uint64_t>(-ETIMEDOUT);
        t.set_regs(r);
        t.at = Task::At::SyscallExit;
    }
    return s;
}

void Replayer::step_to_mutex_lock(Task& t, SyncCallState& call)
{
    // glibc's cancellation runs a few hundred instructions; a bound far
    // above that turns a path this does not know into a report.
    constexpr int kMaxSteps = 100000;
    auto lock_word = [&]() {
        uint32_t v = 0;
        if (!t.memory().read(RemoteAddr(call.mutex), {reinterpret_cast<uint8_t*>(&v), sizeof(v)}))
            diverge(t, "cannot read the mutex " + hex(call.mutex) + " of " + std::string(sync_call_name(call.fn)));
        return v;
    };
    EngineSteps steps(engine_step_);
    for (int i = 0; i < kMaxSteps; i++) {
        Registers before = t.regs();
        uint32_t word = lock_word();
        resume(t, Resume::Syscall, true);
        StopInfo s = wait_stop(t, "a step inside " + std::string(sync_call_name(call.fn)));
        if (s.kind == StopInfo::Kind::SyscallStop) {
            // The condition variable's own lock, or a wake-up; a wait that
            // sleeps is ended in its turn, as any other.
            if (!run_futex_while_stepping(t, call, s))
                return;
            continue;
        }
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP)
            diverge(t, "inside " + std::string(sync_call_name(call.fn)) + ": " + describe_stop(t, s));
        if (lock_word() != word) {
            // That instruction took the mutex (or marked it contended):
            // undone, it is made again in the acquire event's turn. It
            // wrote that word and the thread's registers, nothing else.
            if (!t.memory().write(RemoteAddr(call.mutex), {reinterpret_cast<const uint8_t*>(&word), sizeof(word)}))
                diverge(t, "cannot write the mutex " + hex(call.mutex) + " back");
            t.set_regs(before);
            return;
        }
    }
    diverge(t, "inside " + std::string(sync_call_name(call.fn)) +
                   ", where the recording's wait timed out: the "
                   "thread did not come to its mutex within " +
                   std::to_string(kMaxSteps) + " instructions");
}

} // namespace rw::replay
