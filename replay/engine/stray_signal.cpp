#include "stray_signal.h"

#include <sys/ptrace.h>
#include <unistd.h>

#include <csignal>

namespace rw::replay {

bool is_stray_signal(pid_t tid, int signo)
{
    siginfo_t si{};
    if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0)
        return false;
    // Sent by the replayer. A world restored from a landmark lives in a pid
    // namespace of its own, where the replayer has no pid (0).
    if (si.si_code == SI_TKILL && (si.si_pid == getpid() || si.si_pid == 0))
        return false;
    bool fault = signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE || signo == SIGTRAP;
    return !(fault && si.si_code > 0);
}

} // namespace rw::replay
