#include "recording_filter.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <iterator>

namespace rw {
bool install_recording_filter()
{
    // ptrace's number in each ABI a 64-bit process can call: x86-64's,
    // x32's (compat: a 32-bit request) and i386's through int 0x80.
    constexpr uint32_t kX32Ptrace = 0x40000000u | 521u;
    constexpr uint32_t kI386Ptrace = 26;
    constexpr uint32_t kRefuse = SECCOMP_RET_TRACE | kTracingRefused;
    constexpr uint32_t kPtrace = SECCOMP_RET_TRACE | kPtraceCall;
    constexpr uint32_t kWait = SECCOMP_RET_TRACE | kWaitCall;
    // Classic BPF jumps are forward offsets: the instructions are numbered
    // in the comments.
    struct sock_filter filter[] = {
        /* 0 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        /* 1 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 3, 0), // -> 5
        /* 2 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 0, 10),  // -> 3, 13
        /* 3 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 4 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kI386Ptrace, 9, 8), // -> 14, 13
        /* 5 */ BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        /* 6 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rseq, 0, 1), // -> 7, 8
        /* 7 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        /* 8 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 6, 0),  // -> 15
        /* 9 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kX32Ptrace, 4, 0),  // -> 14
        /* 10 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_wait4, 5, 0),  // -> 16
        /* 11 */ BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_waitid, 4, 0), // -> 16
        /* 12 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 13 */ BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        /* 14 */ BPF_STMT(BPF_RET | BPF_K, kRefuse),
        /* 15 */ BPF_STMT(BPF_RET | BPF_K, kPtrace),
        /* 16 */ BPF_STMT(BPF_RET | BPF_K, kWait),
    };
    struct sock_fprog prog = {static_cast<unsigned short>(std::size(filter)), filter};
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0)
        return true;
    // Without CAP_SYS_ADMIN a filter needs no_new_privs.
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

} // namespace rw
