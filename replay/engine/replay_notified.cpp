// Serving runs of recorded syscalls through seccomp user notifications
// (syscall_notifier.h).
//
// Only inside step_through(), and only for a syscall whose thread's next
// event is another syscall the filter notifies: once answered, the thread
// runs on by itself, so nothing else may need it stopped before it makes
// that call (another thread's event, a signal, an rdtsc, the caller looking
// at it). Where the next call is not served that way, the thread, blocked
// in its notification, is interrupted and put back just before its syscall
// instruction, the state from which the ptrace path goes on: nothing of
// the program ran in between. Every check of the ptrace path is made on
// the notification (the call and its arguments, the data it is passed);
// where one fails, the ptrace path makes it again and reports the
// divergence with the registers at hand.
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <random>

#include "debug_log.h"
#include "remote_syscall.h"
#include "replayer.h"
#include "steady_now.h"
#include "syscall_restart.h"

namespace rw::replay {
namespace {

// A run of calls ends with a hand-over (an interrupt, a stop, the call
// again through ptrace): about two round trips. A run is begun only where
// this many calls of the thread, one after another, can be served.
constexpr size_t kLeastRun = 4;

// Deadlines here are read from the coarse clock (a few ms behind).
constexpr std::chrono::milliseconds kLeastInterrupt{20};

} // namespace

bool notified_call(const SyscallEvent& e)
{
    // (A write to a mapped file changes the replay's copy of it too:
    // replay_syscall.cpp, apply_mapped_write.)
    return SyscallNotifier::notifies(e.nr, e.args) && !(e.flags & (kSyscallChildReturn | kSyscallMappedWrite));
}

bool Replayer::step_through(uint64_t last, std::chrono::steady_clock::time_point deadline, bool untrapped)
{
    through_last_ = last;
    through_deadline_ = deadline;
    through_untrapped_ = untrapped;
    stepping_through_ = true;
    struct Done {
        Replayer& r;
        ~Done()
        {
            r.stepping_through_ = false;
            r.waiter_.quiet_waits_over();
        }
    } done{*this};
    bool stepped = false;
    do {
        if (stepped && hook_)
            hook_->on_event_passed(source_.next_index());
        if (!step())
            return stepped;
        stepped = true;
    } while (notified_task_);
    return true;
}

bool Replayer::may_serve_by_notification(Task& t, const SyscallEvent& e, bool beginning)
{
    if (!notifier_ || !stepping_through_ || parallel_)
        return false;
    // After this call the thread runs on to its next one: the caller
    // must not want it stopped after this event, nor a debugger see it
    // pass a point in between.
    if (current_ >= through_last_ || coarse_now() >= through_deadline_)
        return false;
    // An interrupt to look for the debugger now and then is sent as on the
    // ptrace path; a short one (a search's sample) is not for a run.
    if ((interrupt_delay_ && *interrupt_delay_ < kLeastInterrupt) || t.single_stepping || t.step_on_resume ||
        t.inject_signal)
        return false;
    if (!notified_call(e) || restarts(e.ret))
        return false;
    size_t ahead = beginning ? kLeastRun - 1 : 1;
    if (beginning && current_ + ahead > through_last_)
        return false;
    for (size_t i = 0; i < ahead; i++) {
        const IndexedEvent* next = source_.peek_ahead(i);
        const auto* call = next ? std::get_if<SyscallEvent>(&next->event) : nullptr;
        if (!call || call->tid != e.tid || !notified_call(*call))
            return false;
    }
    return true;
}

bool Replayer::serve_by_notification(Task& t, const SyscallEvent& e)
{
    if (notified_task_ == &t && current_ < agent_until_) {
        // The syscall agent answered it inside the program (syscall_agent.h).
        t.at = Task::At::Running;
        agent_calls_++;
        after_syscall(t, e);
        return true;
    }
    if (notified_task_ != &t) {
        if (!options_.notify_syscalls || !stepping_through_ || parallel_)
            return false;
        // Begun from where a syscall event leaves a thread: stopped at the
        // entry of a call it skipped, its result in place, or at the exit
        // of one that ran.
        bool after_call = (t.at == Task::At::SyscallEntry && t.emulated_entry) || t.at == Task::At::SyscallExit;
        if (!after_call || t.stop_pending)
            return false;
        if (!notifier_ && !notifier_tried_ && t.group().tasks.size() == 1)
            install_notifier(t);
        if (!may_serve_by_notification(t, e, true))
            return false;
        if (!t.filtered)
            t.filtered = notifier_->filters(t.tid());
        if (!*t.filtered)
            return false;
        notifier_->claim(t.tid());
        notified_task_ = &t;
        prepare_agent(t, e);
        if (interrupt_delay_ && !interrupt_deadline_ && t.tid() == interrupt_tid_)
            interrupt_deadline_ = steady_now() + *interrupt_delay_; // running from now (as Replayer::resume)
        t.resume(Resume::Notified);
    }
    auto arrival = run_arrival(t);
    if (current_ < agent_until_)
        return serve_by_notification(t, e); // (the agent answered calls before this arrival)
    if (arrival.stop) {
        // A breakpoint, a signal, the end of a program that diverged: the
        // ptrace path takes the stop as if it had resumed the thread.
        waiter_.put_back(t.tid(), *arrival.stop);
        leave_notified_run(t);
        t.stop_pending = true;
        return false;
    }
    if (!arrival.call) {
        leave_notified_run(t); // (a call it makes later is refused: may_run)
        report_stuck(t, syscall_name(e.nr) + "()");
    }
    const SyscallNotification& call = *arrival.call;
    if (!may_serve_by_notification(t, e, false) || !notification_matches(t, call, e)) {
        hand_over(t);
        return false;
    }
    load_agent(t); // the calls after this one
    if (!notifier_->answer(call.id, e.ret)) {
        // A signal interrupted the wait: the thread stops for it, and the
        // call starts again when it resumes (its output, already written,
        // is written again the same).
        leave_notified_run(t);
        t.stop_pending = true;
        return false;
    }
    t.at = Task::At::Running;
    after_syscall(t, e);
    return true;
}

StopWaiter::Arrival Replayer::wait_call_or_stop(Task& t)
{
    auto watchdog = coarse_now() + options_.watchdog;
    for (;;) {
        bool interrupting = interrupt_deadline_ && interrupt_tid_ == t.tid() && !interrupt_sent_;
        // Nothing is to stop the thread but its next call: no debugger trap,
        // no interrupt due, none on its way.
        bool quiet =
            stepping_through_ && through_untrapped_ && !interrupt_deadline_ && !interrupt_delay_ && !t.stop_pending;
        auto arrival = waiter_.wait_call_or_stop(
            t.tid(), interrupting ? std::min(watchdog, *interrupt_deadline_) : watchdog, quiet);
        if (arrival.stop || arrival.call || !interrupting || coarse_now() >= watchdog)
            return arrival;
        // The ptrace path's interrupt (wait_stop): its SIGSTOP stops the
        // thread in its code or ends the wait of its call, and the stop goes
        // to the ptrace path, which knows it.
        interrupt_deadline_.reset();
        interrupt_delay_.reset();
        interrupt_sent_ = ::syscall(SYS_tgkill, t.group().tgid, t.tid(), SIGSTOP) == 0;
    }
}

bool Replayer::notification_matches(Task& t, const SyscallNotification& call, const SyscallEvent& e)
{
    if (!call.native || call.nr != e.nr)
        return false;
    const SyscallInfo* info = find_syscall(e.nr);
    size_t nargs = info ? info->arg_formats.size() : 6;
    for (size_t i = 0; i < nargs; i++)
        if (call.args[i] != e.args[i])
            return false;
    TraceeMemory mem = t.memory();
    for (const auto& m : e.memory) {
        if (m.dir != Direction::In || m.unreadable || written_by_call(e, m))
            continue;
        if (m.hashed_only)
            return false; // long: the ptrace path reads it a piece at a time
        std::vector<uint8_t> actual(m.bytes.size());
        if (!mem.read(RemoteAddr(m.addr), actual) || hash_bytes(actual.data(), actual.size()) != m.hash)
            return false;
    }
    for (const auto& m : e.memory) {
        if (m.dir != Direction::Out || m.unreadable) // (not mapped: see write_outputs)
            continue;
        if (!mem.write(RemoteAddr(m.addr), m.bytes))
            return false;
    }
    return true;
}

void Replayer::forget_notified_run()
{
    if (!notified_task_)
        return;
    notified_task_ = nullptr;
    notifier_->release();
    waiter_.forget_call();
    agent_until_ = 0;
    agent_arrival_.reset();
}

void Replayer::leave_notified_run(Task& t)
{
    retire_agent(t);
    forget_notified_run();
    t.last_resume = Resume::Emulate; // resumed again by the ptrace path, the next syscall stops at its entry
    t.at = Task::At::Running;
    t.mask_changed(); // (a call the filter let through may have, in a program that diverged)
}

void Replayer::hand_over(Task& t)
{
    leave_notified_run(t);
    if (::ptrace(PTRACE_INTERRUPT, t.tid(), nullptr, nullptr) != 0)
        diverge(t, std::string("cannot interrupt the thread in its syscall: ") + strerror(errno));
    auto s = waiter_.wait_for(t.tid(), options_.watchdog);
    if (!s)
        throw ReplayError(ReplayErrorKind::Stuck, current_, t.recorded_tid(),
                          "thread " + std::to_string(t.recorded_tid()) + " did not stop when interrupted in a syscall");
    if (s->kind != StopInfo::Kind::GroupStop) {
        // A signal came first: the ptrace path takes it; the interrupt's
        // stop comes later and is nothing of the program's.
        waiter_.put_back(t.tid(), *s);
        t.stop_pending = true;
        t.interrupt_stop_due = true;
        return;
    }
    // The interrupted wait returned ERESTARTSYS from the syscall; the
    // thread is put back before the syscall instruction, which runs again
    // when it resumes, and the kernel's restart is turned off.
    Registers r = t.regs();
    if (static_cast<int64_t>(r[Registers::RAX]) == kErestartSys && static_cast<int64_t>(r[Registers::ORIG_RAX]) >= 0) {
        r[Registers::RIP] -= 2;
        r[Registers::RAX] = r[Registers::ORIG_RAX];
        r[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
        t.set_regs(r);
    }
    t.reblock_sigtrap();
    t.at = Task::At::EventStop;
}

void Replayer::settle_notified_run()
{
    if (!notified_task_)
        return;
    Task& t = *notified_task_;
    auto arrival = run_arrival(t);
    if (current_ < agent_until_)
        // The agent answered calls the stream does not have next: never
        // replay on as if they had not been made.
        throw ReplayError(ReplayErrorKind::Divergence, current_, t.recorded_tid(),
                          "the syscall agent answered " + std::to_string(agent_until_ - current_) +
                              " calls of thread " + std::to_string(t.recorded_tid()) +
                              " that are not the next events of the replay (rewind's error; "
                              "REWIND_SYSCALL_AGENT=0 replays without it)");
    if (arrival.call) {
        hand_over(t);
        return;
    }
    if (arrival.stop)
        waiter_.put_back(t.tid(), *arrival.stop);
    leave_notified_run(t);
    t.stop_pending = true;
}

void Replayer::install_notifier(Task& t)
{
    notifier_tried_ = true;
    uint32_t cookie = std::random_device{}();
    std::vector<struct sock_filter> program = SyscallNotifier::filter_program(cookie);
    // The program and its struct sock_fprog, in scratch memory put back after.
    size_t code_bytes = program.size() * sizeof(struct sock_filter);
    uint64_t at = (t.regs()[Registers::RSP] - kScratchBelowStack - code_bytes - 64) & ~uint64_t(15);
    uint64_t fprog_at = at + ((code_bytes + 15) & ~size_t(15));
    struct {
        uint16_t len;
        uint8_t pad[6];
        uint64_t filter;
    } fprog = {static_cast<uint16_t>(program.size()), {}, at};
    std::vector<uint8_t> saved(fprog_at + sizeof fprog - at);
    TraceeMemory mem = t.memory();
    if (!mem.read(RemoteAddr(at), saved))
        return;
    std::vector<uint8_t> bytes(saved.size());
    std::memcpy(bytes.data(), program.data(), code_bytes);
    std::memcpy(bytes.data() + (fprog_at - at), &fprog, sizeof fprog);
    if (!mem.write(RemoteAddr(at), bytes))
        return;
    // The listener is taken from the program's descriptor table (pidfd_getfd):
    // without a pidfd, no filter (one without its listener fails every call it notifies).
    UniqueFd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, t.group().tgid, 0)));
    if (!pidfd) {
        debug_log("replay: no seccomp notifications (pidfd_open: %s)", strerror(errno));
        return;
    }
    int64_t fd =
        inject_syscall(t, SYS_seccomp, {SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, fprog_at, 0, 0, 0});
    mem.write(RemoteAddr(at), saved);
    if (fd < 0) {
        debug_log("replay: no seccomp notifications (%s): every syscall is a ptrace stop",
                  strerror(static_cast<int>(-fd)));
        return;
    }
    int ours = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), static_cast<int>(fd), 0));
    if (ours < 0)
        refuse(t.recorded_tid(), std::string("cannot take the seccomp listener of the replayed program: ") +
                                     strerror(errno) + " (REWIND_NOTIFY_SYSCALLS=0 replays without it)");
    notifier_ = std::make_unique<SyscallNotifier>(UniqueFd(ours), cookie);
    notifier_->may_run = [this](pid_t tid) {
        if (injecting_)
            return true;
        for (const auto& [recorded, task] : tasks_)
            if (task->tid() == tid && task->at != Task::At::Gone)
                return false;
        return true;
    };
    waiter_.serve_notifications(notifier_.get());
    // The program's descriptor table as it was (the waiter lets this close run).
    inject_syscall(t, SYS_close, {static_cast<uint64_t>(fd), 0, 0, 0, 0, 0});
    debug_log("replay: syscalls served by seccomp notification from event %llu", (unsigned long long)current_);
}

} // namespace rw::replay
