// Tracing between recorded processes (emulated_tracing.h): the stops of
// a recorded tracer's tracees, as it sees them, and what its exit does.
// Its requests and waits are answered in supervisor_tracer_calls.cpp.
//
// Replay needs nothing of this: a tracee's stop is a stretch in which it
// has no events. Stopped in user code, a tracee gets a preemption point
// there, which replay runs it to before the tracer looks at it or changes
// it.
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "bpf_capture.h"
#include "event_assembler.h"
#include "supervisor.h"
#include "tracee.h"

namespace rw {
bool Supervisor::stops_alone(const Thread& t, int signo) const
{
    uint64_t bit = signal_bit(signo);
    if (!is_stop_signal(signo) || ((thread_signal_mask(t.tid, "SigCgt") | thread_signal_mask(t.tid, "SigIgn") |
                                    thread_signal_mask(t.tid, "SigBlk")) &
                                   bit))
        return false;
    return std::count_if(threads_.begin(), threads_.end(), [&](const auto& kv) { return kv.second.tgid == t.tgid; }) ==
           1;
}

bool Supervisor::stop_for_tracer(Thread& t, const siginfo_t& si, SignalKind kind, const Registers& regs)
{
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee || si.si_signo == SIGKILL)
        return false;
    EmulatedStop stop;
    stop.kind = EmulatedStop::Kind::Signal;
    stop.status = signal_stop_status(si.si_signo);
    stop.siginfo = si;
    stop.signal_kind = kind;
    stop.regs = regs;
    if (kind == SignalKind::AtPosition)
        stop.pages = t.position_pages;
    if (tracee->exec_trap && si.si_signo == SIGTRAP && si.si_code == SI_TKILL && si.si_pid == getpid()) {
        tracee->exec_trap = false;
        stop.siginfo = siginfo_t{};
        stop.siginfo.si_signo = SIGTRAP;
        stop.siginfo.si_code = SI_USER;
        stop.siginfo.si_pid = t.tgid;
        stop.siginfo.si_uid = thread_uid(t.tgid);
    }
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

bool Supervisor::group_stop_for_tracer(Thread& t, int signo)
{
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee)
        return false;
    // Attached while stopped: PTRACE_ATTACH's interrupt ends the listening
    // of the group stop, which is the stop the tracer sees.
    tracee->attach_stop = false;
    apply_pending_options(t, *tracee);
    EmulatedStop stop;
    stop.kind = EmulatedStop::Kind::Group;
    stop.status = group_stop_status(signo, tracee->seized);
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

void Supervisor::apply_pending_options(Thread& t, EmulatedTracee& tracee)
{
    if (!tracee.options_pending)
        return;
    tracee.options_pending = false;
    long real = kRecordingPtraceOptions | (tracee.options & kRealTracerOptions);
    ::ptrace(PTRACE_SETOPTIONS, t.tid, nullptr, reinterpret_cast<void*>(real));
}

bool Supervisor::listen_notice_for_tracer(Thread& t, int signo)
{
    // PTRACE_LISTEN's notice: the group stop ended (SIGCONT) or a signal
    // came.
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee || !tracee->listening)
        return false;
    tracee->listening = false;
    EmulatedStop stop;
    stop.kind = EmulatedStop::Kind::Event;
    stop.status = (PTRACE_EVENT_STOP << 16) | (signo << 8) | 0x7f;
    stop.regs = get_registers(t.tid);
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

bool Supervisor::event_stop_for_tracer(Thread& t, int event, int signo)
{
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee)
        return false;
    apply_pending_options(t, *tracee);
    if (event == PTRACE_EVENT_STOP && listen_notice_for_tracer(t, signo))
        return true;
    if (event == PTRACE_EVENT_STOP && tracee->attach_stop && !tracee->stop) {
        tracee->attach_stop = false;
        EmulatedStop stop;
        stop.kind = EmulatedStop::Kind::Signal;
        stop.status = signal_stop_status(SIGSTOP);
        stop.siginfo.si_signo = SIGSTOP;
        stop.siginfo.si_code = SI_KERNEL; // the kernel sends it as itself
        stop.regs = get_registers(t.tid);
        // At a syscall's exit (one the interrupt cut short) a signal the
        // tracer passes on is delivered here; in user code, it is sent
        // again (continue_tracee).
        stop.resend = static_cast<int64_t>(stop.regs[Registers::ORIG_RAX]) < 0;
        enter_tracer_stop(t, *tracee, std::move(stop));
        return true;
    }
    bool interrupt = event == PTRACE_EVENT_STOP && tracee->interrupt_requested;
    bool exit = event == PTRACE_EVENT_EXIT && (tracee->options & PTRACE_O_TRACEEXIT);
    bool exec = event == PTRACE_EVENT_EXEC && (tracee->options & PTRACE_O_TRACEEXEC);
    bool forked = (tracee->options & fork_event_option(event)) != 0;
    if (event == PTRACE_EVENT_STOP)
        tracee->interrupt_requested = false;
    if ((!interrupt && !exit && !exec && !forked) || tracee->stop)
        return false;
    EmulatedStop stop;
    stop.kind = EmulatedStop::Kind::Event;
    stop.status = event_stop_status(event);
    stop.regs = get_registers(t.tid);
    // The exit status; the thread id before the exec; the new task's id.
    if (exit || exec || forked)
        stop.event_msg = get_event_msg(t.tid);
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

bool Supervisor::fork_stop_for_tracer(Thread& parent, Thread& child, int event)
{
    // The kernel attaches the new task to its parent's tracer, with the
    // parent's options, and holds it in a first stop of its own; the
    // parent stops with the event. (CLONE_UNTRACED, which prevents both,
    // brings no event here either.)
    EmulatedTracee* tracee = tracing_.find(parent.tid);
    if (!tracee || !(tracee->options & fork_event_option(event)) || tracee->stop)
        return false;
    EmulatedTracee born;
    born.tid = child.tid;
    born.tgid = child.tgid;
    born.tracer = tracee->tracer;
    born.tracer_tgid = tracee->tracer_tgid;
    born.parent_tgid = parent.tgid;
    born.seized = tracee->seized;
    born.options = tracee->options;
    born.options_pending = born.options & kRealTracerOptions;
    born.auto_attached = true;
    tracing_.add(born);
    return event_stop_for_tracer(parent, event);
}

bool Supervisor::birth_stop_for_tracer(Thread& t)
{
    // Its first stop: PTRACE_EVENT_STOP if its parent was seized, else the
    // SIGSTOP the kernel queues without a sender. The recorder's own first
    // stop of the task is an event stop: a signal the tracer passes on is
    // sent (continue_tracee), not injected.
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee || !tracee->auto_attached)
        return false;
    tracee->auto_attached = false;
    apply_pending_options(t, *tracee);
    EmulatedStop stop;
    stop.regs = get_registers(t.tid);
    stop.at_birth = true;
    if (tracee->seized) {
        stop.kind = EmulatedStop::Kind::Event;
        stop.status = event_stop_status(PTRACE_EVENT_STOP);
    } else {
        stop.kind = EmulatedStop::Kind::Signal;
        stop.status = signal_stop_status(SIGSTOP);
        stop.siginfo.si_signo = SIGSTOP;
        stop.siginfo.si_code = SI_USER;
        stop.resend = true;
    }
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

bool Supervisor::syscall_stop_for_tracer(Thread& t)
{
    // The tracer reads the tracee at these stops (its registers, its
    // memory, PTRACE_GET_SYSCALL_INFO, which the real stop answers); it may
    // not change it there (supervisor_tracer_calls.cpp refuses that):
    // replay has no such point to change it at.
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee || !tracee->syscall_stops || tracee->stop)
        return false;
    tracee->syscall_stops = false;
    EmulatedStop stop;
    stop.kind = EmulatedStop::Kind::Syscall;
    stop.status = ((SIGTRAP | (tracee->options & PTRACE_O_TRACESYSGOOD ? 0x80 : 0)) << 8) | 0x7f;
    stop.regs = get_registers(t.tid);
    enter_tracer_stop(t, *tracee, std::move(stop));
    return true;
}

void Supervisor::enter_tracer_stop(Thread& t, EmulatedTracee& tracee, EmulatedStop stop)
{
    // Stopped in user code, the point is recorded: replay runs it there
    // before the tracer looks at it or changes it. (Not again where it was
    // stopped last with nothing of its own in between, as a fault the
    // tracer let pass without its signal is: replay has it there already.)
    capture_.drain();
    bool in_syscall = static_cast<int64_t>(stop.regs[Registers::ORIG_RAX]) >= 0;
    bool at_boundary =
        stop.at_birth || stop.kind == EmulatedStop::Kind::Group || stop.kind == EmulatedStop::Kind::Syscall ||
        (stop.kind == EmulatedStop::Kind::Event && in_syscall) ||
        (stop.kind == EmulatedStop::Kind::Signal && !stop.resend && stop.signal_kind == SignalKind::AtSyscall);
    bool rests_there = t.preempted_at && same_registers(*t.preempted_at, stop.regs) &&
                       assembler_.last_syscall_seq(t.tid) == t.preempted_after;
    if (!at_boundary && !rests_there) {
        record_preemption(t, std::vector<uint64_t>{});
        t.preempted_at = stop.regs;
        t.preempted_after = assembler_.last_syscall_seq(t.tid);
    }
    // Its process's other threads (or those of processes it shares memory
    // with, its tracer among them) run meanwhile.
    if (serialized(t) && !t.out_of_turn) {
        give_up_cpu(t);
        t.out_of_turn = true;
    }
    tracee.stop = std::move(stop);
    tell_tracer(tracee);
}

void Supervisor::continue_tracee(EmulatedTracee& tracee, int signo, bool syscall_stops)
{
    tracee.syscall_stops = syscall_stops;
    auto it = threads_.find(tracee.tid);
    std::optional<EmulatedStop> stop = std::move(tracee.stop);
    tracee.stop.reset();
    if (it == threads_.end() || !stop)
        return;
    Thread& t = it->second;
    int deliver = 0;
    if (stop->kind == EmulatedStop::Kind::Signal && signo != 0 && stops_alone(t, signo)) {
        // The signal would stop the tracee's process, which is the tracee
        // alone: its group stop, as the tracer sees it, comes at once, and
        // nothing is delivered (a real one would leave replay a stop to
        // end that no recorded event ends).
        EmulatedStop group;
        group.kind = EmulatedStop::Kind::Group;
        group.status = group_stop_status(signo, tracee.seized);
        tracee.stop = std::move(group);
        tell_tracer(tracee);
        return;
    }
    if (stop->kind == EmulatedStop::Kind::Signal && signo != 0) {
        siginfo_t si = stop->siginfo;
        if (signo != si.si_signo) {
            // The tracer changed the signal: the kernel says it sent it.
            si = siginfo_t{};
            si.si_signo = signo;
            si.si_code = SI_USER;
            si.si_pid = tracee.tracer_tgid;
            si.si_uid = thread_uid(tracee.tracer_tgid);
        }
        if (stop->resend) {
            // Stopped in user code by rewind's interrupt: the signal goes
            // as any other sent to the thread, delivered at its next
            // syscall.
            syscall(SYS_tgkill, t.tgid, t.tid, signo);
            resume(t, 0);
            return;
        }
        set_siginfo(t.tid, si);
        t.position_pages = stop->pages;
        // (Registers the tracer set since are those it is delivered with.)
        Registers regs = stop->signal_kind == SignalKind::AtPosition ? stop->regs : get_registers(t.tid);
        record_signal(t, si, stop->signal_kind, regs);
        t.position_pages.clear();
        deliver = signo;
    }
    // (The supervisor's own syscall stops, for a deferred signal, end at
    // the next entry; the tracer's at its next stop.)
    t.syscall_stops = t.syscall_stops || syscall_stops;
    resume(t, deliver);
}

void Supervisor::tell_tracer(const EmulatedTracee& tracee)
{
    // The kernel's SIGCHLD to the tracer (sent by rewind, its siginfo set
    // to the kernel's when it arrives: forge_tracer_sigchld).
    tracer_sigchld_[tracee.tracer_tgid] = cld_trapped(tracee, tracee.stop->status);
    ::kill(tracee.tracer_tgid, SIGCHLD);
    std::vector<Tid> held;
    for (auto& [tid, th] : threads_) {
        if (th.tgid != tracee.tracer_tgid)
            continue;
        if (th.holds_wait)
            held.push_back(tid);
        else if (th.waits_for_tracees && !th.wake_requested && ::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0)
            th.wake_requested = true;
    }
    for (Tid tid : held)
        if (auto it = threads_.find(tid); it != threads_.end() && it->second.holds_wait)
            on_wait_call(it->second);
}

bool Supervisor::forge_tracer_sigchld(Thread& t, const siginfo_t& si)
{
    if (si.si_signo != SIGCHLD || si.si_code != SI_USER || si.si_pid != getpid())
        return false;
    auto it = tracer_sigchld_.find(t.tgid);
    if (it == tracer_sigchld_.end())
        return false;
    set_siginfo(t.tid, it->second);
    tracer_sigchld_.erase(it);
    return true;
}

void Supervisor::trap_exec_for_tracer(Thread& t)
{
    // An exec of a tracee attached the old way (not seized) and without
    // PTRACE_O_TRACEEXEC sends it a SIGTRAP, delivered as the call
    // returns; it is the kernel's, whose siginfo names the tracee
    // (stop_for_tracer).
    EmulatedTracee* tracee = tracing_.find(t.tid);
    if (!tracee || tracee->seized || (tracee->options & PTRACE_O_TRACEEXEC))
        return;
    tracee->exec_trap = true;
    syscall(SYS_tgkill, t.tgid, t.tid, SIGTRAP);
}

void Supervisor::forget_tracing(Tid tid, int status)
{
    try {
        if (EmulatedTracee* tracee = tracing_.find(tid)) {
            // Its end is the tracer's to see where the kernel would not
            // tell it otherwise: a thread's (to a tracer waiting with
            // __WALL or __WCLONE), or a process's whose parent it is not.
            // The tracee stays known until that wait.
            if (tracee->tgid != tid || tracee->parent_tgid != tracee->tracer_tgid) {
                EmulatedStop end;
                end.kind = EmulatedStop::Kind::Exit;
                end.status = status;
                tracee->stop = std::move(end);
                tell_tracer(*tracee);
            } else {
                Tid tracer_tgid = tracee->tracer_tgid;
                tracing_.erase(tid);
                // A wait held for it alone is the kernel's again.
                for (auto& [other, th] : threads_)
                    if (th.tgid == tracer_tgid && th.holds_wait) {
                        th.holds_wait = false;
                        resume(th, 0);
                    }
            }
        }
        // A tracer's exit lets its tracees go on.
        for (Tid tracee : tracing_.tracees_of(tid)) {
            EmulatedTracee copy = *tracing_.find(tracee);
            tracing_.erase(tracee);
            continue_tracee(copy, 0);
        }
    } catch (const std::system_error& e) {
        if (e.code().value() != ESRCH)
            throw;
    }
}

} // namespace rw
