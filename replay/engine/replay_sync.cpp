// Synchronization events of traces recorded with --parallel.
//
// The recorded threads ran at the same time; replay runs them one at a time
// in the global order of their events (EventSource::order_by_seq). A sync
// event's place is its thread's arrival at the function's entry: an int3
// there stops the thread, which then runs the whole call before any other
// thread moves, so a lock is taken, a semaphore decremented, a condition
// signalled in the recorded order. The futex calls inside those functions
// depend on contention, which differs in replay: the recorded ones are not
// replayed, and the replayed ones run for real. A call that must wait for
// another thread (a condition wait, a barrier, a join) blocks in such a
// futex; the replay then goes on with the next events, and finishes the
// call when its thread's next event comes.
#include <sys/syscall.h>

#include <csignal>

#include "event_format.h"
#include "instruction_trap.h"
#include "replayer.h"
#include "steady_now.h"
#include "sync_calls.h"
#include "text.h"

namespace rw::replay {
namespace {

// How long a thread inside a synchronization call may run without a stop
// before the replayer looks whether it sleeps in the kernel.
constexpr auto kBlockPoll = std::chrono::milliseconds(5);

std::string describe_sync(const SyncEvent& e)
{
    return std::string(e.phase == SyncPhase::Release ? "release " : "acquire ") + std::string(sync_call_name(e.fn)) +
           "(" + hex(e.object) + ")";
}

} // namespace

namespace {

// Calls a synchronization call makes besides its futexes: pthread_join
// frees the stacks of ended threads its cache no longer keeps. They run
// for real inside the call, in its turn, as its futexes do.
bool runs_inside_sync_call(long nr)
{
    return nr == SYS_futex || nr == SYS_munmap || nr == SYS_madvise;
}

} // namespace

bool Replayer::skipped_in_parallel(const SyscallEvent& e) const
{
    // The recorded ones come before the event of the call they are inside
    // (an acquire's seq is taken at its return).
    return parallel_trace() && (e.flags & kSyscallInSync) && runs_inside_sync_call(e.nr);
}

std::string Replayer::other_threads_last_events(Tid tid) const
{
    std::string out;
    for (const auto& [other, last] : last_events_)
        if (other != tid)
            out += "\n  thread " + std::to_string(other) + ": last event #" + std::to_string(last.first) + " (" +
                   last.second + ")";
    return out.empty() ? out : "\n  the other threads, where the replay left them:" + out;
}

std::string Replayer::stuck_details(Tid tid) const
{
    std::string others = parallel_trace() ? other_threads_last_events(tid) : "";
    return others.empty() ? others : others.substr(1); // the report's first details line
}

void Replayer::on_sync(const SyncEvent& e)
{
    Task& t = task(e.tid);
    collect_fresh(t);
    finish_pending_sync(t);
    if (e.phase == SyncPhase::Acquire && waits_for_deferred(t))
        run_deferred_calls(e);
    if (auto it = in_sync_call_.find(e.tid); it != in_sync_call_.end()) {
        SyncCallState call = it->second;
        in_sync_call_.erase(it);
        if (e.phase != SyncPhase::Acquire || call.fn != e.fn)
            diverge(t, "expected " + describe_sync(e) + ", but the thread is still inside " +
                           std::string(sync_call_name(call.fn)));
        finish_sync_call(t, e, call);
        return;
    }
    if (e.phase == SyncPhase::Release)
        run_failed_tries_first(e);
    else if (is_try_acquire(e.fn) && e.ret != 0)
        run_acquires_first(e);
    reach_sync_entry(t, e);
    if (e.fn == RW_SYNC_CREATE || e.fn == RW_SYNC_ONCE)
        return; // the new thread's clone, the initializer's calls are events of their own
    const SyncCall* info = find_sync_call(e.fn);
    SyncCallState call = entered_call(t, e);
    // Deferred, the call runs whole when the round's first thread leaves.
    call.deferred = completes_round_later(e);
    bool returned = !call.deferred && run_sync_call(t, call);
    bool acquire_follows = e.phase == SyncPhase::Release && info && info->acquires;
    if (!returned || acquire_follows) {
        // Its acquire event (or, blocked, the end of this one) comes later.
        if (!acquire_follows)
            call.pending = e;
        in_sync_call_[e.tid] = call;
        return;
    }
    check_sync_result(t, e, call);
}

bool Replayer::completes_round_later(const SyncEvent& e)
{
    // A barrier's round is completed by the thread whose atomic increment
    // comes last, and that one returns PTHREAD_BARRIER_SERIAL_THREAD. The
    // recorded order is that of the arrivals at the function's entry: a
    // thread can arrive first and increment last. The one the recording
    // says completed the round enters in its acquire event's turn, when all
    // the others of its round have entered.
    constexpr int64_t kSerialThread = -1;
    constexpr size_t kLookAhead = 64;
    if (e.fn != RW_SYNC_BARRIER_WAIT || e.phase != SyncPhase::Release)
        return false;
    for (size_t skip = 0; skip < kLookAhead; skip++) {
        const IndexedEvent* next = source_.peek_for_task(e.tid, skip);
        if (!next)
            return false;
        if (const auto* sync = std::get_if<SyncEvent>(&next->event))
            return sync->phase == SyncPhase::Acquire && sync->fn == e.fn && sync->object == e.object &&
                   static_cast<int32_t>(sync->ret) == kSerialThread;
        const auto* call = std::get_if<SyscallEvent>(&next->event);
        if (!call || !skipped_in_parallel(*call))
            return false;
    }
    return false;
}

bool Replayer::waits_for_deferred(Task& t)
{
    // Asleep in its call when its turn to leave comes, the thread waits for
    // the round it entered to complete (one woken by an earlier round's
    // end is at, or on its way to, its futex's exit).
    auto it = in_sync_call_.find(t.recorded_tid());
    return it != in_sync_call_.end() && it->second.blocked && !waiter_.has_pending(t.tid()) && asleep_in_futex(t.tid());
}

void Replayer::run_deferred_calls(const SyncEvent& leaving)
{
    for (auto& [tid, call] : in_sync_call_) {
        if (!call.deferred || call.fn != leaving.fn || call.object != leaving.object)
            continue;
        call.deferred = false;
        if (Task* t = find_task(tid))
            run_sync_call(*t, call); // it returns (its acquire checks the result), or sleeps
    }
}

SyncCallState Replayer::entered_call(Task& t, const SyncEvent& e)
{
    SyncCallState call;
    call.fn = e.fn;
    call.entry = e.entry;
    call.object = e.object;
    if (e.fn == RW_SYNC_COND_WAIT || e.fn == RW_SYNC_COND_TIMEDWAIT)
        call.mutex = t.regs()[Registers::RSI];
    if (!t.memory().read(RemoteAddr(t.regs()[Registers::RSP]),
                         {reinterpret_cast<uint8_t*>(&call.return_to), sizeof(call.return_to)}))
        diverge(t, "cannot read the return address of " + std::string(sync_call_name(e.fn)));
    return call;
}

bool Replayer::is_try_acquire(uint32_t fn)
{
    return fn == RW_SYNC_MUTEX_TRYLOCK || fn == RW_SYNC_SEM_TRYWAIT || fn == RW_SYNC_RWLOCK_TRYRDLOCK ||
           fn == RW_SYNC_RWLOCK_TRYWRLOCK || fn == RW_SYNC_SPIN_TRYLOCK;
}

void Replayer::run_failed_tries_first(const SyncEvent& release)
{
    // A release's place in the order is its entry; its effect (the
    // increment, the unlock) comes a little later. A try-acquire on
    // another CPU that failed in between returned after that entry, so it
    // is ordered after the release, which replay runs whole first: the try
    // would succeed. A try that failed changed nothing, so it runs now,
    // before the release, when it is its thread's next event.
    run_next_calls_early(release.tid, release.object,
                         [](const SyncEvent& next) { return is_try_acquire(next.fn) && next.ret != 0; });
}

void Replayer::run_acquires_first(const SyncEvent& failed_try)
{
    // An acquire's place is its return; its effect (a semaphore's decrement
    // by a waiter just woken) comes a little earlier. A try-acquire that
    // failed in between, on the effect, is ordered before the acquire: run
    // after it, the try would succeed. So the acquire runs first, when it
    // is its thread's next event (it succeeded in the recording).
    auto acquires = [](uint32_t fn) {
        return fn == RW_SYNC_MUTEX_LOCK || fn == RW_SYNC_MUTEX_TIMEDLOCK || fn == RW_SYNC_RWLOCK_RDLOCK ||
               fn == RW_SYNC_RWLOCK_WRLOCK || fn == RW_SYNC_SEM_WAIT || fn == RW_SYNC_SEM_TIMEDWAIT ||
               fn == RW_SYNC_SPIN_LOCK || is_try_acquire(fn);
    };
    run_next_calls_early(failed_try.tid, failed_try.object,
                         [&](const SyncEvent& next) { return acquires(next.fn) && next.ret == 0; });
}

void Replayer::run_next_calls_early(Tid except, uint64_t object, const std::function<bool(const SyncEvent&)>& which)
{
    // Only calls whose threads stand still until then (their next event is
    // the call, on the same object); its event then only checks the result.
    // The two were microseconds apart in the recording: a thread whose next
    // event is farther is not looked for (the look would read the trace
    // ahead up to it, at every release).
    constexpr size_t kNear = 64;
    for (Task* other : live_tasks()) {
        Tid tid = other->recorded_tid();
        if (tid == except || in_sync_call_.count(tid) || !other->idle_at_stop())
            continue;
        const IndexedEvent* next = source_.peek_for_task(tid, 0, kNear);
        const auto* sync = next ? std::get_if<SyncEvent>(&next->event) : nullptr;
        if (!sync || sync->phase != SyncPhase::Acquire || sync->object != object || !which(*sync))
            continue;
        collect_fresh(*other);
        reach_sync_entry(*other, *sync);
        SyncCallState call = entered_call(*other, *sync);
        run_sync_call(*other, call); // returned, or asleep: its event finishes it
        in_sync_call_[tid] = call;
    }
}

void Replayer::plant_engine_trap(std::optional<perfclock::InstructionTrap>& trap, Task& t, uint64_t addr)
{
    if (!hook_) {
        trap.emplace(t.tid(), addr);
        return;
    }
    trap.emplace(t.tid(), addr, hook_->byte_under_breakpoint(t, addr),
                 [this, &t, addr] { return hook_ && hook_->byte_under_breakpoint(t, addr).has_value(); });
    trap->name_in(&sync_trap_);
}

std::optional<uint8_t> Replayer::engine_byte_under(uint64_t addr) const
{
    if (sync_trap_ && sync_trap_->address() == addr && sync_trap_->planted())
        return sync_trap_->original();
    return std::nullopt;
}

void Replayer::hide_engine_int3(uint64_t addr, std::span<uint8_t> data) const
{
    if (!sync_trap_ || !sync_trap_->planted())
        return;
    uint64_t at = sync_trap_->address();
    if (at >= addr && at - addr < data.size())
        data[at - addr] = sync_trap_->original();
}

void Replayer::reach_sync_entry(Task& t, const SyncEvent& e)
{
    std::optional<perfclock::InstructionTrap> trap;
    try {
        plant_engine_trap(trap, t, e.entry);
    } catch (const std::exception& x) {
        diverge(t, "cannot stop the thread at " + std::string(sync_call_name(e.fn)) + " (" + hex(e.entry) +
                       "): " + x.what());
    }
    perfclock::EngineInt3 active(engine_int3_, e.entry);
    // Still at the entry where its last event stopped it (a pthread_once
    // whose initializer calls pthread_once): the next call is a later one.
    if (t.regs()[Registers::RIP] == e.entry)
        step_over_engine_int3(t, *trap);
    resume(t, Resume::Emulate);
    StopInfo s = wait_stop(t, describe_sync(e));
    const Registers& r = t.regs();
    if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP || r[Registers::RIP] != e.entry)
        diverge(t, "expected " + describe_sync(e) + ", got " + describe_stop(t, s));
    if (r[Registers::RDI] != e.object)
        diverge(t, std::string(sync_call_name(e.fn)) + " is called on another object",
                "  expected " + hex(e.object) + "\n  actual   " + hex(r[Registers::RDI]));
}

bool Replayer::run_sync_call(Task& t, SyncCallState& call)
{
    std::optional<perfclock::InstructionTrap> trap;
    try {
        plant_engine_trap(trap, t, call.return_to);
    } catch (const std::exception& x) {
        diverge(t, "cannot stop the thread where " + std::string(sync_call_name(call.fn)) + " returns: " + x.what());
    }
    perfclock::EngineInt3 active(engine_int3_, call.return_to);
    for (;;) {
        resume(t, Resume::Syscall);
        std::optional<StopInfo> stop;
        if (call.in_syscall) {
            // In a futex that runs for real: it may wait for a thread that
            // runs later in the recorded order.
            while (!(stop = waiter_.wait_for(t.tid(), kBlockPoll))) {
                if (!asleep_in_futex(t.tid()))
                    continue;
                // A signaller may wait for waiters that were woken and
                // stopped in their call (glibc's condition variables wait
                // for the old group's waiters to leave before they switch
                // groups): those go on to their call's end, or their next
                // wait. A waiter that sleeps waits for a later event.
                bool signals = call.fn == RW_SYNC_COND_SIGNAL || call.fn == RW_SYNC_COND_BROADCAST;
                if (!signals) {
                    t.at = Task::At::Running;
                    call.blocked = true;
                    return false;
                }
                trap->lift();
                bool progress = advance_woken_sync_calls(t.recorded_tid(), call.futex_addr);
                trap->plant();
                engine_int3_ = call.return_to;
                if (progress)
                    continue;
                t.at = Task::At::Running;
                call.blocked = true;
                return false;
            }
            t.at = stop->kind == StopInfo::Kind::SyscallStop ? Task::At::SyscallExit : Task::At::SignalStop;
            if (claim_engine_int3(t, *stop)) // (cannot be: the call is still inside the kernel)
                diverge(t, "a trap inside a syscall");
        } else {
            stop = wait_stop(t, "the return from " + std::string(sync_call_name(call.fn)));
        }
        if (!step_sync_call(t, call, *stop))
            return true;
    }
}

bool Replayer::step_sync_call(Task& t, SyncCallState& call, const StopInfo& s)
{
    const Registers& r = t.regs();
    if (s.kind == StopInfo::Kind::SignalDelivery && s.signal == SIGTRAP && r[Registers::RIP] == call.return_to) {
        call.ret = static_cast<int64_t>(r[Registers::RAX]);
        return false;
    }
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "inside " + std::string(sync_call_name(call.fn)) + ": " + describe_stop(t, s));
    if (call.in_syscall) {
        call.in_syscall = false;
        return true;
    }
    int nr = static_cast<int>(static_cast<int64_t>(r[Registers::ORIG_RAX]));
    if (!runs_inside_sync_call(nr))
        diverge(t, "inside " + std::string(sync_call_name(call.fn)) + " the thread made " + syscall_name(nr) +
                       ", which the recording did not have there");
    call.in_syscall = true;
    if (nr != SYS_futex)
        return true;
    call.futex_addr = r[Registers::RDI];
    // A timed wait's deadline is absolute and was computed from the
    // recording's clock, which replay serves from the log: against the
    // real clock it has long passed, and the wait would time out at once
    // and change the call's outcome. The wait runs without a deadline; one
    // that timed out in the recording is ended when its turn comes
    // (wait_woken).
    if (futex_op_waits(r[Registers::RSI]) && r[Registers::R10] != 0) {
        Registers untimed = r;
        untimed[Registers::R10] = 0;
        t.set_regs(untimed);
    }
    return true;
}

bool Replayer::advance_woken_sync_calls(Tid except, uint64_t watched)
{
    bool progress = false;
    for (auto& [tid, call] : in_sync_call_) {
        // Only a call whose release is replayed and whose acquire is not
        // (a condition wait): one that only acquires would take its lock
        // before its turn.
        if (tid == except || !call.blocked || call.pending)
            continue;
        Task* u = find_task(tid);
        if (!u)
            continue;
        auto stop = waiter_.take(u->tid());
        if (!stop)
            continue;
        progress = true;
        call.blocked = false;
        u->at = Task::At::SyscallExit;
        step_sync_call(*u, call, *stop); // the futex's exit
        step_until_released(*u, call, watched);
    }
    return progress;
}

void Replayer::step_until_released(Task& u, SyncCallState& call, uint64_t watched)
{
    // One instruction at a time, so that the waiter gives up its hold on the
    // word the signaller waits for (glibc: its group reference) and wakes
    // it, but stops before it can take its mutex: that is its acquire
    // event's business, in its turn.
    constexpr int kMaxSteps = 4000, kStepsAfterRelease = 64;
    auto word = [&]() {
        uint32_t v = 0;
        u.memory().read(RemoteAddr(watched), {reinterpret_cast<uint8_t*>(&v), sizeof(v)});
        return v;
    };
    uint32_t before = word();
    int after = -1;
    EngineSteps steps(engine_step_);
    for (int i = 0; i < kMaxSteps && after < kStepsAfterRelease; i++) {
        resume(u, Resume::Syscall, true);
        StopInfo s = wait_stop(u, "a step inside " + std::string(sync_call_name(call.fn)));
        if (s.kind == StopInfo::Kind::SyscallStop) {
            // A futex: the wake of the signaller (or another wait); a wait
            // that sleeps leaves the waiter blocked.
            if (!run_futex_while_stepping(u, call, s))
                return;
            if (after >= 0)
                break;
            continue;
        }
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP)
            diverge(u, "inside " + std::string(sync_call_name(call.fn)) + ": " + describe_stop(u, s));
        if (after >= 0)
            after++;
        else if (word() != before)
            after = 0;
    }
}

bool Replayer::run_futex_while_stepping(Task& t, SyncCallState& call, const StopInfo& entry)
{
    step_sync_call(t, call, entry);
    resume(t, Resume::Syscall);
    std::optional<StopInfo> exit;
    while (!(exit = waiter_.wait_for(t.tid(), kBlockPoll)))
        if (asleep_in_futex(t.tid())) {
            t.at = Task::At::Running;
            call.blocked = true;
            return false;
        }
    t.at = Task::At::SyscallExit;
    step_sync_call(t, call, *exit);
    return true;
}

void Replayer::finish_sync_call(Task& t, const SyncEvent& e, SyncCallState& call)
{
    if (call.blocked) {
        // Woken by now, or never: the events that woke it are replayed.
        StopInfo s = wait_woken(t, call, recorded_timeout(e) && !call.timed_out);
        call.blocked = false;
        if (!step_sync_call(t, call, s)) {
            release_held_out();
            check_sync_result(t, e, call);
            return;
        }
    }
    if (call.in_syscall || call.ret == kNotReturned) {
        std::optional<perfclock::InstructionTrap> trap;
        perfclock::EngineInt3 active(engine_int3_, call.return_to);
        plant_engine_trap(trap, t, call.return_to);
        bool timed_out = recorded_timeout(e) && !call.timed_out;
        // A waiter woken again and again by wait_woken, whose futex no
        // thread releases in the recorded order, stops somewhere new at
        // every turn, so wait_stop's watchdog alone never runs out.
        auto deadline = steady_now() + options_.watchdog;
        for (;;) {
            resume(t, Resume::Syscall);
            StopInfo s = call.in_syscall ? wait_woken(t, call, timed_out)
                                         : wait_stop(t, "the return from " + std::string(sync_call_name(call.fn)));
            if (!step_sync_call(t, call, s))
                break;
            if (steady_now() > deadline)
                throw ReplayError(ReplayErrorKind::Stuck, current_, t.recorded_tid(),
                                  "thread " + std::to_string(t.recorded_tid()) + " did not return from " +
                                      std::string(sync_call_name(call.fn)) + "(" + hex(e.object) + ") within " +
                                      std::to_string(options_.watchdog.count()) +
                                      " s: it waits for a futex that no thread releases in the recorded order "
                                      "(a lock or wake-up the recording did not order)",
                                  stuck_details(t.recorded_tid()));
        }
    }
    release_held_out();
    check_sync_result(t, e, call);
}

bool Replayer::recorded_timeout(const SyncEvent& e)
{
    switch (e.fn) {
    case RW_SYNC_COND_TIMEDWAIT:
    case RW_SYNC_MUTEX_TIMEDLOCK:
        return e.ret == ETIMEDOUT;
    case RW_SYNC_SEM_TIMEDWAIT:
        return e.ret == -1;
    default:
        return false;
    }
}

StopInfo Replayer::wait_woken(Task& t, const SyncCallState& call, bool timed_out)
{
    // Which of several woken condition waiters takes a signal is decided
    // in user space, by the first to run; the kernel's pick of whom to wake
    // is another. A waiter whose turn it is to return, asleep while another
    // woken one is held at its futex's exit with the signal still there, is
    // woken too (a spurious wake-up, which glibc's wait loop allows): it
    // takes the signal and the other, in its turn, waits again.
    std::string what = "the end of the futex wait in " + std::string(sync_call_name(call.fn));
    auto deadline = steady_now() + kBlockPoll * 20;
    while (steady_now() < deadline) {
        if (auto stop = waiter_.wait_for(t.tid(), kBlockPoll)) {
            t.at = stop->kind == StopInfo::Kind::SyscallStop ? Task::At::SyscallExit : Task::At::SignalStop;
            return *stop;
        }
        if (!asleep_in_futex(t.tid()))
            continue;
        if (timed_out)
            return time_out_wait(t, what); // as its deadline ended it in the recording
        // Others asleep on the same word would take the wake-up (and, first
        // to run, the signal) meant for the thread whose turn it is: they
        // are held out of their wait until its call has returned.
        std::vector<Tid> held = park_sleepers_on(call.futex_addr);
        held_out_.insert(held_out_.end(), held.begin(), held.end());
        wake_sleepers_on(t, call.futex_addr);
        break;
    }
    return wait_stop(t, what);
}

void Replayer::wake_sleepers_on(Task& t, uint64_t word)
{
    constexpr uint64_t kFutexWakePrivate = 1 | 128;
    const std::array<uint64_t, 6> wake = {word, kFutexWakePrivate, INT32_MAX, 0, 0, 0};
    // A thread stopped by the replay; else one parked in its wait (at its
    // futex's exit, set to make the call again); else one woken and held
    // at its futex's exit.
    for (Task* other : t.group().tasks) {
        auto it = in_sync_call_.find(other->recorded_tid());
        bool asleep = it != in_sync_call_.end() && it->second.blocked;
        if (other != &t && !asleep && other->idle_at_stop()) {
            inject_syscall(*other, SYS_futex, wake);
            return;
        }
    }
    for (Task* other : t.group().tasks)
        if (other != &t && other->at == Task::At::Running && is_parked(other->recorded_tid())) {
            inject_syscall(*other, SYS_futex, wake); // (it stays parked)
            return;
        }
    for (Task* other : t.group().tasks) {
        if (other == &t || other->at != Task::At::Running)
            continue;
        auto held = waiter_.take(other->tid());
        if (!held)
            continue;
        bool host = held->kind == StopInfo::Kind::SyscallStop;
        if (host) {
            inject_syscall(*other, SYS_futex, wake);
            other->at = Task::At::Running; // its own exit stays the replay's to take
        }
        waiter_.put_back(other->tid(), *held);
        if (host)
            return;
    }
}

void Replayer::release_held_out()
{
    std::vector<Tid> held;
    held.swap(held_out_);
    unpark_sleepers(held);
}

void Replayer::finish_pending_sync(Task& t)
{
    auto it = in_sync_call_.find(t.recorded_tid());
    if (it == in_sync_call_.end() || !it->second.pending)
        return;
    SyncCallState call = it->second;
    in_sync_call_.erase(it);
    finish_sync_call(t, *call.pending, call);
}

void Replayer::check_sync_result(Task& t, const SyncEvent& e, const SyncCallState& call)
{
    if (e.phase == SyncPhase::Acquire && call.ret != e.ret)
        diverge(t, std::string(sync_call_name(e.fn)) + "(" + hex(e.object) + ") returned " + std::to_string(call.ret) +
                       "; in the recording " + std::to_string(e.ret));
}

} // namespace rw::replay
