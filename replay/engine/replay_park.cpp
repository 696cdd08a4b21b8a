// Threads asleep in a futex while a debugger looks at a parallel trace.
//
// A thread of a --parallel trace that must wait inside a synchronization
// call (a condition wait, a barrier, a join) sleeps in a futex that runs
// for real while the replay goes on with other threads (replay_sync.cpp).
// A debugger that stops the program must see every thread stopped: each
// sleeper is interrupted (PTRACE_INTERRUPT ends its wait with
// -ERESTARTSYS), set back to make the call again from its syscall
// instruction and, when the debugger lets the program go on, resumed into
// it. Snapshots park sleepers the same way and copy them in that state.
// A thread whose wait had ended already stops at its futex's exit by
// itself, which stays the replay's to take.
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "replayer.h"
#include "steady_now.h"
#include "sync_calls.h"
#include "syscall_restart.h"
#include "text.h"

namespace rw::replay {

bool asleep_in_futex(pid_t tid)
{
    std::ifstream stat("/proc/" + std::to_string(tid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return false;
    size_t paren = line.rfind(')');
    char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
    if (state != 'S')
        return false;
    std::ifstream sc("/proc/" + std::to_string(tid) + "/syscall");
    long nr = -1;
    sc >> nr;
    return nr == SYS_futex;
}

std::vector<Tid> Replayer::park_sleepers()
{
    std::vector<Tid> parked;
    if (!parallel_trace())
        return parked;
    for (auto& [tid, call] : in_sync_call_)
        if (park_sleeper(tid, call))
            parked.push_back(tid);
    return parked;
}

std::vector<Tid> Replayer::park_sleepers_on(uint64_t word)
{
    std::vector<Tid> parked;
    for (auto& [tid, call] : in_sync_call_)
        if (call.in_syscall && call.futex_addr == word && park_sleeper(tid, call))
            parked.push_back(tid);
    return parked;
}

bool Replayer::park_sleeper(Tid tid, const SyncCallState& call)
{
    Task* t = find_task(tid);
    if (!call.blocked || !t || t->at != Task::At::Running || is_parked(tid))
        return false;
    auto fail = [&](const std::string& what) {
        throw ReplayError(ReplayErrorKind::Stuck, current_, tid,
                          "thread " + std::to_string(tid) + ", asleep in " + std::string(sync_call_name(call.fn)) +
                              ", could not be stopped: " + what);
    };
    // Nothing wakes a sleeper while the replay holds the other threads
    // (its wait has no deadline). One that is not asleep was woken before,
    // and is on its way to its futex's exit, where it stops by itself; or
    // it was put back to sleep a moment ago and is on its way into the futex.
    std::optional<StopInfo> stop = waiter_.take(t->tid());
    for (auto deadline = steady_now() + options_.watchdog; !stop && !asleep_in_futex(t->tid());) {
        if (steady_now() > deadline)
            fail("it neither sleeps nor stops");
        stop = waiter_.wait_for(t->tid(), std::chrono::milliseconds(2));
    }
    if (stop) {
        waiter_.put_back(t->tid(), *stop);
        return false;
    }
    // With PTRACE_SYSCALL in effect, an interrupt ends the wait with a
    // syscall-exit stop, and the kernel restarts the call when the
    // thread is resumed without a signal.
    if (::ptrace(PTRACE_INTERRUPT, t->tid(), nullptr, nullptr) != 0)
        fail(std::string("PTRACE_INTERRUPT: ") + std::strerror(errno));
    auto exit = waiter_.wait_for(t->tid(), options_.watchdog);
    if (!exit || exit->kind != StopInfo::Kind::SyscallStop)
        fail(exit ? "it stopped " + describe_stop(*t, *exit) : "it did not stop");
    auto result = static_cast<int64_t>(t->regs()[Registers::RAX]);
    if (result != kErestartSys && result != kErestartRestartBlock) {
        waiter_.put_back(t->tid(), *exit); // woken after all: the replay takes its end
        return false;
    }
    // The wait is made again from its syscall instruction (as the
    // kernel's restart would): a clean state a snapshot can copy.
    Registers r = t->regs();
    r[Registers::RIP] -= 2;
    r[Registers::RAX] = r[Registers::ORIG_RAX];
    t->set_regs(r);
    parked_.push_back({tid});
    return true;
}

bool Replayer::stable_sleeper(Task& t)
{
    if (!parallel_trace() || t.at != Task::At::Running)
        return false;
    auto it = in_sync_call_.find(t.recorded_tid());
    return it != in_sync_call_.end() && it->second.blocked && !waiter_.has_pending(t.tid()) && asleep_in_futex(t.tid());
}

bool Replayer::is_parked(Tid recorded_tid) const
{
    for (const auto& p : parked_)
        if (p.recorded_tid == recorded_tid)
            return true;
    return false;
}

void Replayer::unpark_sleepers(const std::vector<Tid>& sleepers)
{
    for (Tid tid : sleepers) {
        auto it = std::find_if(parked_.begin(), parked_.end(), [&](const auto& p) { return p.recorded_tid == tid; });
        if (it == parked_.end())
            continue;
        parked_.erase(it);
        Task* t = find_task(tid);
        if (!t)
            continue;
        // Back at its syscall instruction: the futex's entry stop is taken
        // here, its exit is the replay's.
        t->resume_untouched();
        auto entry = waiter_.wait_for(t->tid(), options_.watchdog);
        auto nr = entry && entry->kind == StopInfo::Kind::SyscallStop
                      ? static_cast<int64_t>(t->regs()[Registers::ORIG_RAX])
                      : -1;
        if (nr != SYS_futex)
            throw ReplayError(ReplayErrorKind::Stuck, current_, tid,
                              "thread " + std::to_string(tid) +
                                  " did not go back to its futex wait after the debugger: " +
                                  (entry ? "it stopped " + describe_stop(*t, *entry) : "it did not stop"));
        t->resume_untouched();
    }
}

} // namespace rw::replay
