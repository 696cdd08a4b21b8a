#include "register_file.h"

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <system_error>
#include <vector>

#include "tracee.h"

namespace rw {

namespace {

// Where the upper halves of the YMM registers sit in the XSAVE area.
constexpr size_t kXsaveYmmOffset = 576;

} // namespace

RegisterFile read_register_file(pid_t tid)
{
    RegisterFile r;
    r.gp = get_registers(tid);
    if (::ptrace(PTRACE_GETFPREGS, tid, nullptr, &r.fp) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GETFPREGS");
    std::vector<uint8_t> xsave(4096);
    struct iovec iov = {xsave.data(), xsave.size()};
    if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) == 0 &&
        iov.iov_len >= kXsaveYmmOffset + 256) {
        uint64_t xstate_bv;
        std::memcpy(&xstate_bv, xsave.data() + 512, 8);
        r.has_avx = true;
        if (xstate_bv & 4) // YMM state in use; otherwise it is all zeros
            std::memcpy(r.ymm_high.data(), xsave.data() + kXsaveYmmOffset, 256);
    }
    return r;
}

void write_register_file(pid_t tid, const RegisterFile& r)
{
    set_registers(tid, r.gp);
    if (::ptrace(PTRACE_SETFPREGS, tid, nullptr, &r.fp) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_SETFPREGS");
    if (!r.has_avx)
        return;
    std::vector<uint8_t> xsave(4096);
    struct iovec iov = {xsave.data(), xsave.size()};
    if (::ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0 ||
        iov.iov_len < kXsaveYmmOffset + 256)
        return;
    std::memcpy(xsave.data() + kXsaveYmmOffset, r.ymm_high.data(), 256);
    uint64_t xstate_bv;
    std::memcpy(&xstate_bv, xsave.data() + 512, 8);
    xstate_bv |= 4;
    std::memcpy(xsave.data() + 512, &xstate_bv, 8);
    ::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov);
}

} // namespace rw
