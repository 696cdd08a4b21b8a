#include "emulated_tracing.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <linux/wait.h>

#include <fstream>
#include <string>

#include "process_image.h"

namespace rw {

WaitSelector wait4_selector(pid_t pid, uint64_t options, pid_t own_pgid)
{
    WaitSelector s;
    if (pid > 0) {
        s.which = WaitSelector::Which::Pid;
        s.id = pid;
    } else if (pid == 0) {
        s.which = WaitSelector::Which::Pgid;
        s.id = own_pgid;
    } else if (pid < -1) {
        s.which = WaitSelector::Which::Pgid;
        s.id = -pid;
    }
    s.own_tracees_only = options & __WNOTHREAD;
    s.no_hang = options & WNOHANG;
    return s;
}

std::optional<WaitSelector> waitid_selector(uint64_t idtype, uint64_t id, uint64_t options, pid_t own_pgid)
{
    WaitSelector s;
    switch (idtype) {
    case P_ALL:
        break;
    case P_PID:
        s.which = WaitSelector::Which::Pid;
        s.id = static_cast<pid_t>(id);
        break;
    case P_PGID:
        s.which = WaitSelector::Which::Pgid;
        s.id = id == 0 ? own_pgid : static_cast<pid_t>(id);
        break;
    default:
        return std::nullopt;
    }
    s.own_tracees_only = options & __WNOTHREAD;
    s.no_hang = options & WNOHANG;
    s.consume = !(options & WNOWAIT);
    return s;
}

int signal_stop_status(int signo)
{
    return (signo << 8) | 0x7f;
}

int group_stop_status(int signo, bool seized)
{
    return seized ? (PTRACE_EVENT_STOP << 16) | (signo << 8) | 0x7f : signal_stop_status(signo);
}

int event_stop_status(int event)
{
    return (event << 16) | (SIGTRAP << 8) | 0x7f;
}

uint64_t fork_event_option(int event)
{
    switch (event) {
    case PTRACE_EVENT_FORK:
        return PTRACE_O_TRACEFORK;
    case PTRACE_EVENT_VFORK:
        return PTRACE_O_TRACEVFORK;
    case PTRACE_EVENT_CLONE:
        return PTRACE_O_TRACECLONE;
    case PTRACE_EVENT_VFORK_DONE:
        return PTRACE_O_TRACEVFORKDONE;
    default:
        return 0;
    }
}

uid_t thread_uid(Tid tid)
{
    return static_cast<uid_t>(proc_status_number(tid, "Uid").value_or(0));
}

uint64_t thread_signal_mask(Tid tid, std::string_view field)
{
    std::ifstream in("/proc/" + std::to_string(tid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
            return std::stoull(line.substr(field.size() + 1), nullptr, 16);
    return 0;
}

siginfo_t cld_trapped(const EmulatedTracee& tracee, int status)
{
    siginfo_t si{};
    si.si_signo = SIGCHLD;
    si.si_pid = tracee.tid;
    si.si_uid = thread_uid(tracee.tid);
    if (WIFEXITED(status)) {
        si.si_code = CLD_EXITED;
        si.si_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        si.si_code = WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED;
        si.si_status = WTERMSIG(status);
    } else {
        si.si_code = CLD_TRAPPED;
        si.si_status = (status >> 8) & 0x7f;
    }
    return si;
}

EmulatedTracee* EmulatedTracing::find(Tid tracee)
{
    auto it = tracees_.find(tracee);
    return it == tracees_.end() ? nullptr : &it->second;
}

EmulatedTracee& EmulatedTracing::add(EmulatedTracee tracee)
{
    Tid tid = tracee.tid;
    return tracees_.insert_or_assign(tid, std::move(tracee)).first->second;
}

bool EmulatedTracing::is_tracer(Tid tgid) const
{
    for (const auto& [tid, t] : tracees_)
        if (t.tracer_tgid == tgid)
            return true;
    return false;
}

std::vector<Tid> EmulatedTracing::tracees_of(Tid tracer) const
{
    std::vector<Tid> out;
    for (const auto& [tid, t] : tracees_)
        if (t.tracer == tracer)
            out.push_back(tid);
    return out;
}

bool EmulatedTracing::selected(const EmulatedTracee& t, const WaitSelector& s, Tid caller, Tid caller_tgid,
                               const std::function<pid_t(Tid)>& pgid_of) const
{
    // Any thread of the tracer's process waits for its tracees (as for
    // its children), unless __WNOTHREAD.
    if (t.tracer_tgid != caller_tgid || (s.own_tracees_only && t.tracer != caller))
        return false;
    switch (s.which) {
    case WaitSelector::Which::Any:
        return true;
    case WaitSelector::Which::Pid:
        return t.tid == s.id;
    case WaitSelector::Which::Pgid:
        return pgid_of(t.tid) == s.id;
    }
    return false;
}

EmulatedTracee* EmulatedTracing::reportable(const WaitSelector& selector, Tid caller, Tid caller_tgid,
                                            const std::function<pid_t(Tid)>& pgid_of)
{
    for (auto& [tid, t] : tracees_)
        if (t.stop && !t.stop->reported && selected(t, selector, caller, caller_tgid, pgid_of))
            return &t;
    return nullptr;
}

} // namespace rw
