#include "syscall_sigmask.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <system_error>

#include "syscall_restart.h"

namespace rw::replay {

namespace {

bool interrupted(int64_t result)
{
    return result == -EINTR || result == kErestartSys || result == kErestartNoIntr || result == kErestartNoHand;
}

// x86-64 rt_sigframe: the return address, then the ucontext (flags, link,
// stack_t, sigcontext), whose sigset follows.
constexpr uint64_t kUcontextInFrame = 8;
constexpr uint64_t kSigmaskInUcontext = 8 + 8 + 24 + 256;

} // namespace

std::optional<uint64_t> mask_of_interrupted_wait(const Registers& regs, TraceeMemory memory)
{
    if (!interrupted(static_cast<int64_t>(regs[Registers::RAX])))
        return std::nullopt;
    uint64_t where = 0;
    switch (regs[Registers::ORIG_RAX]) {
    case SYS_rt_sigsuspend:
        where = regs[Registers::RDI];
        break;
    case SYS_ppoll:
        where = regs[Registers::R10];
        break;
    case SYS_epoll_pwait:
    case SYS_epoll_pwait2:
        where = regs[Registers::R8];
        break;
    case SYS_pselect6:
        // The sixth argument points at {const sigset_t *ss; size_t ss_len}.
        if (regs[Registers::R9] == 0)
            return std::nullopt;
        where = memory.read_value<uint64_t>(RemoteAddr(regs[Registers::R9])).value_or(0);
        break;
    default:
        return std::nullopt;
    }
    if (where == 0)
        return std::nullopt;
    return memory.read_value<uint64_t>(RemoteAddr(where));
}

uint64_t thread_sigmask(pid_t tid)
{
    uint64_t mask = 0;
    if (::ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GETSIGMASK");
    return mask;
}

void set_thread_sigmask(pid_t tid, uint64_t mask)
{
    if (::ptrace(PTRACE_SETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_SETSIGMASK");
}

namespace {

// Bit `signo` of a signal set /proc/TID/status shows (SigCgt:, SigIgn:).
bool status_set_has(pid_t tid, const std::string& field, int signo)
{
    std::ifstream status("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind(field, 0) == 0)
            return (std::stoull(line.substr(field.size()), nullptr, 16) >> (signo - 1)) & 1;
    return false;
}

} // namespace

bool has_handler(pid_t tid, int signo)
{
    return status_set_has(tid, "SigCgt:", signo);
}

bool is_ignored(pid_t tid, int signo)
{
    return status_set_has(tid, "SigIgn:", signo);
}

uint64_t frame_sigmask_address(const Registers& regs)
{
    return regs[Registers::RSP] + kUcontextInFrame + kSigmaskInUcontext;
}

} // namespace rw::replay
