#include "syscall_notifier.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <system_error>

#include "syscall_table.h"

namespace rw::replay {
namespace {

constexpr uint32_t kX32Bit = 0x40000000;

// The syscalls replay runs for real for at least some of their arguments.
bool runs_for_real(const SyscallInfo& info)
{
    return info.replay != ReplayAction::Emulate && info.replay != ReplayAction::Refuse;
}

// Linux 6.6 and later (the C library's headers may be older).
constexpr unsigned long kNotifSetFlags = SECCOMP_IOW(4, __u64);
constexpr uint64_t kSyncWakeUp = 1;

} // namespace

SyscallNotifier::SyscallNotifier(UniqueFd listener, uint32_t cookie) : listener_(std::move(listener)), cookie_(cookie)
{
    // The thread and the replayer hand the CPU to each other at every
    // call: woken synchronously, each runs at once on the waker's CPU.
    // Older kernels refuse the flag; the calls are served all the same.
    (void)::ioctl(listener_.get(), kNotifSetFlags, kSyncWakeUp);
}

bool SyscallNotifier::notifies(int nr, const std::array<uint64_t, 6>& args)
{
    if (nr == SYS_rt_sigprocmask)
        return args[1] == 0; // a query (replay_action): served from the log
    const SyscallInfo* info = find_syscall(nr);
    return !info || !runs_for_real(*info);
}

std::vector<struct sock_filter> SyscallNotifier::filter_program(uint32_t cookie)
{
    std::vector<int> passed;
    for (const SyscallInfo& info : all_syscalls())
        if (runs_for_real(info) && info.nr != SYS_rt_sigprocmask)
            passed.push_back(info.nr);
    // Layout: [cookie] [arch check] [nr load] [-1 check] [x32 check]
    // [rt_sigprocmask: its set, both halves] [one jump per passed nr]
    // [notify] [allow]. Jump offsets count from the next instruction.
    std::vector<struct sock_filter> p;
    // Never read: it names this replay's filter (filters()).
    p.push_back(BPF_STMT(BPF_LD | BPF_IMM, cookie));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    size_t n = passed.size();
    auto off = [](size_t o) { return static_cast<uint8_t>(o); };
    // Not x86-64 (int 0x80): to the listener, which does not serve it.
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, off(n + 8)));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
    // -1: a call replay skipped at its entry stop (the filter runs after
    // it); the kernel runs nothing and leaves rax as replay set it.
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, off(n + 7), 0));
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kX32Bit, off(n + 5), 0));
    // rt_sigprocmask without a new set only reads the mask: served
    // (replay_action); with one it runs.
    uint32_t set_arg = offsetof(struct seccomp_data, args) + sizeof(uint64_t);
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigprocmask, 0, 4));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, set_arg));
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, off(n + 3)));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, set_arg + 4));
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, off(n), off(n + 1)));
    for (size_t i = 0; i < n; i++)
        p.push_back(
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(passed[i]), static_cast<uint8_t>(n - i), 0));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    return p;
}

std::optional<SyscallNotification> SyscallNotifier::receive()
{
    struct seccomp_notif n;
    for (;;) {
        std::memset(&n, 0, sizeof n); // the kernel refuses a buffer that is not zeroed
        if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &n) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno == ENOENT)
            return std::nullopt; // withdrawn: its thread was interrupted or died
        throw std::system_error(errno, std::generic_category(), "SECCOMP_IOCTL_NOTIF_RECV");
    }
    SyscallNotification out;
    out.id = n.id;
    out.tid = static_cast<pid_t>(n.pid);
    out.native = n.data.arch == AUDIT_ARCH_X86_64 && !(static_cast<uint32_t>(n.data.nr) & kX32Bit);
    out.nr = n.data.nr;
    for (size_t i = 0; i < out.args.size(); i++)
        out.args[i] = n.data.args[i];
    return out;
}

bool SyscallNotifier::answer(uint64_t id, int64_t result)
{
    // The kernel sets rax to `error` if it is not 0, else to `val`: any
    // 64-bit result goes through `val`.
    struct seccomp_notif_resp r {};
    r.id = id;
    r.val = result;
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &r) == 0)
        return true;
    if (errno == ENOENT)
        return false;
    throw std::system_error(errno, std::generic_category(), "SECCOMP_IOCTL_NOTIF_SEND");
}

void SyscallNotifier::let_run(uint64_t id)
{
    struct seccomp_notif_resp r {};
    r.id = id;
    r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    // ENOENT: the thread is gone or was interrupted; it makes the call
    // again when it resumes, and is let through then.
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &r) != 0 && errno != ENOENT)
        throw std::system_error(errno, std::generic_category(), "SECCOMP_IOCTL_NOTIF_SEND (continue)");
}

bool SyscallNotifier::filters(pid_t tid) const
{
    std::vector<struct sock_filter> ours = filter_program(cookie_);
    // The length first: the kernel copies the whole program.
    if (::ptrace(PTRACE_SECCOMP_GET_FILTER, tid, 0, nullptr) != static_cast<long>(ours.size()))
        return false;
    std::vector<struct sock_filter> theirs(ours.size());
    if (::ptrace(PTRACE_SECCOMP_GET_FILTER, tid, 0, theirs.data()) != static_cast<long>(ours.size()))
        return false;
    return std::memcmp(ours.data(), theirs.data(), ours.size() * sizeof(struct sock_filter)) == 0;
}

} // namespace rw::replay
