#include "thread_state.h"

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace rw::replay {
namespace {

constexpr size_t kLargestXsave = 16384; // AMX tiles make it about 11 KiB

[[noreturn]] void fail(const char* what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

} // namespace

ThreadState read_thread_state(pid_t tid)
{
    ThreadState s;
    s.xstate.resize(kLargestXsave);
    struct iovec iov = {s.xstate.data(), s.xstate.size()};
    if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0)
        fail("PTRACE_GETREGSET(NT_X86_XSTATE)");
    s.xstate.resize(iov.iov_len);
    if (::ptrace(PTRACE_GETSIGMASK, tid, reinterpret_cast<void*>(sizeof s.sigmask), &s.sigmask) != 0)
        fail("PTRACE_GETSIGMASK");
    void* head = nullptr;
    size_t len = 0;
    if (::syscall(SYS_get_robust_list, tid, &head, &len) != 0)
        fail("get_robust_list");
    s.robust_head = reinterpret_cast<uint64_t>(head);
    s.robust_len = len;
    return s;
}

void write_thread_state(pid_t tid, const ThreadState& state)
{
    std::vector<uint8_t> xstate = state.xstate;
    struct iovec iov = {xstate.data(), xstate.size()};
    if (::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0)
        fail("PTRACE_SETREGSET(NT_X86_XSTATE)");
    uint64_t mask = state.sigmask;
    if (::ptrace(PTRACE_SETSIGMASK, tid, reinterpret_cast<void*>(sizeof mask), &mask) != 0)
        fail("PTRACE_SETSIGMASK");
}

} // namespace rw::replay
