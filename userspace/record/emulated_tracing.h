// Tracing between recorded processes. The recorder is the kernel's tracer of
// every recorded thread, so a recorded program that traces another recorded
// one (a debugger, strace, a crash reporter, a sandbox) cannot be its
// tracer: the recorder stands in for the kernel. It keeps who traces whom,
// holds a tracee in the stops its tracer would see, and answers the
// tracer's requests and waits from them (supervisor_tracing.cpp,
// supervisor_tracer_calls.cpp). This is the bookkeeping; it changes no
// process.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "event.h"

namespace rw {

// A stop of a tracee, as its tracer sees it.
struct EmulatedStop {
    enum class Kind {
        Signal,  // signal-delivery stop: the tracer decides whether the signal is delivered
        Group,   // group stop (SIGSTOP and the like, delivered)
        Event,   // PTRACE_EVENT_* stop (exit, exec, interrupt)
        Syscall, // a syscall's entry or exit (PTRACE_SYSCALL)
        Exit,    // it ended, and its tracer is not the parent the kernel tells
    };
    Kind kind = Kind::Signal;
    int status = 0;         // what wait reports
    bool reported = false;  // a wait has reported it
    uint64_t event_msg = 0; // PTRACE_GETEVENTMSG
    siginfo_t siginfo{};    // PTRACE_GETSIGINFO (a signal-delivery stop's only)
    // A signal-delivery stop: how the trace records the signal if the
    // tracer lets it through.
    SignalKind signal_kind = SignalKind::AtSyscall;
    Registers regs;
    std::vector<uint64_t> pages;
    bool resend = false;   // in user code, where no signal is recorded: one passed on is sent again
    bool at_birth = false; // a new task's first stop (PTRACE_O_TRACEFORK and the like)
};

struct EmulatedTracee {
    Tid tid = 0, tgid = 0;
    Tid tracer = 0, tracer_tgid = 0;  // the tracing thread and its process
    Tid parent_tgid = 0;              // the process the kernel reports its end to
    bool seized = false;              // PTRACE_SEIZE (group stops are PTRACE_EVENT_STOP)
    bool traceme = false;             // PTRACE_TRACEME: any thread of the parent may ask
    uint64_t options = 0;             // PTRACE_O_*
    bool attach_stop = false;         // the SIGSTOP PTRACE_ATTACH sends is on its way
    bool exec_trap = false;           // the SIGTRAP an exec sends is on its way
    bool interrupt_requested = false; // PTRACE_INTERRUPT's stop is on its way
    bool syscall_stops = false;       // resumed with PTRACE_SYSCALL
    bool listening = false;           // PTRACE_LISTEN: in its group stop, its next notice for the tracer
    bool options_pending = false;     // kRealTracerOptions are set on the thread at its next stop
    bool auto_attached = false; // traced from its birth (a traced fork, vfork or clone): its first stop is the tracer's
    std::optional<EmulatedStop> stop;
};

// Which tracees a wait is for (wait4's pid or waitid's idtype and id).
struct WaitSelector {
    enum class Which { Any, Pid, Pgid } which = Which::Any;
    pid_t id = 0;
    bool own_tracees_only = false; // __WNOTHREAD: the calling thread's own
    bool consume = true;           // not WNOWAIT
    bool no_hang = false;          // WNOHANG
};

// From wait4(pid, status, options, rusage) of a process in group `own_pgid`.
WaitSelector wait4_selector(pid_t pid, uint64_t options, pid_t own_pgid);
// From waitid(idtype, id, infop, options); nothing for an idtype it cannot
// select by (P_PIDFD: the recorder leaves such a wait to the kernel).
std::optional<WaitSelector> waitid_selector(uint64_t idtype, uint64_t id, uint64_t options, pid_t own_pgid);

// The wait status of each kind of stop.
int signal_stop_status(int signo);
int group_stop_status(int signo, bool seized);
int event_stop_status(int event);
// The option that asks for the stop of PTRACE_EVENT_FORK, _VFORK, _CLONE or
// _VFORK_DONE (0 for another event).
uint64_t fork_event_option(int event);

// The user id of thread `tid`'s process (0 if it is gone).
uid_t thread_uid(Tid tid);
// A signal mask of /proc/TID/status ("SigPnd", "ShdPnd", "SigBlk",
// "SigIgn", "SigCgt"; bit N-1 for signal N), 0 if it cannot be read.
uint64_t thread_signal_mask(Tid tid, std::string_view field);
// The SIGCHLD a tracer gets for its tracee's stop or end with wait status
// `status` (CLD_TRAPPED, CLD_EXITED, CLD_KILLED, CLD_DUMPED).
siginfo_t cld_trapped(const EmulatedTracee& tracee, int status);

class EmulatedTracing {
public:
    EmulatedTracee* find(Tid tracee);
    EmulatedTracee& add(EmulatedTracee tracee);
    void erase(Tid tracee) { tracees_.erase(tracee); }
    // Process `tgid` traces someone.
    bool is_tracer(Tid tgid) const;
    // The tracees of thread `tracer`.
    std::vector<Tid> tracees_of(Tid tracer) const;
    // The tracee whose stop a wait of thread `caller` (of process
    // `caller_tgid`) reports; `pgid_of` gives a tracee's process group.
    EmulatedTracee* reportable(const WaitSelector& selector, Tid caller, Tid caller_tgid,
                               const std::function<pid_t(Tid)>& pgid_of);

private:
    bool selected(const EmulatedTracee& t, const WaitSelector& s, Tid caller, Tid caller_tgid,
                  const std::function<pid_t(Tid)>& pgid_of) const;
    std::map<Tid, EmulatedTracee> tracees_;
};

} // namespace rw
