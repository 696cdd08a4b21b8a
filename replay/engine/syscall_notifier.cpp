#include "syscall_notifier.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <stdexcept>
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
    const SyscallInfo* info = find_syscall(nr);
    return !info || !runs_for_real(*info) || is_query(*info, args.data());
}

std::vector<struct sock_filter> SyscallNotifier::filter_program(uint32_t cookie)
{
    std::vector<int> passed;
    std::vector<const SyscallInfo*> queries; // run for real, but served where they only read (is_query)
    for (const SyscallInfo& info : all_syscalls()) {
        if (!runs_for_real(info))
            continue;
        if (info.query_when_null >= 0)
            queries.push_back(&info);
        else
            passed.push_back(info.nr);
    }
    // Layout: [cookie] [arch check] [nr load] [-1 check] [x32 check]
    // [per query call: its nr, then both halves of its argument]
    // [one jump per passed nr] [notify] [allow]. A jump's offset counts from
    // the instruction after it (`to`).
    std::vector<struct sock_filter> p;
    constexpr size_t kHead = 6, kPerQuery = 5;
    size_t notify_at = kHead + kPerQuery * queries.size() + passed.size(), allow_at = notify_at + 1;
    if (notify_at > 255) // a classic BPF jump reaches 255 instructions ahead
        throw std::logic_error("the seccomp filter's table of syscalls is too long for its jumps");
    auto to = [&p](size_t target) { return static_cast<uint8_t>(target - p.size() - 1); };
    // Never read: it names this replay's filter (filters()).
    p.push_back(BPF_STMT(BPF_LD | BPF_IMM, cookie));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
    // Not x86-64 (int 0x80): to the listener, which does not serve it.
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, to(notify_at)));
    p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
    // -1: a call replay skipped at its entry stop (the filter runs after
    // it); the kernel runs nothing and leaves rax as replay set it.
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, to(allow_at), 0));
    p.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kX32Bit, to(notify_at), 0));
    for (const SyscallInfo* q : queries) {
        uint32_t arg =
            offsetof(struct seccomp_data, args) + sizeof(uint64_t) * static_cast<uint32_t>(q->query_when_null);
        size_t next = p.size() + kPerQuery;
        p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(q->nr), 0, to(next)));
        p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg));
        p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, to(allow_at)));
        p.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg + 4));
        p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, to(notify_at), to(allow_at)));
    }
    for (int nr : passed)
        p.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), to(allow_at), 0));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
    p.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
    return p;
}

std::optional<SyscallNotification> SyscallNotifier::receive(bool interruptible)
{
    struct seccomp_notif n;
    for (;;) {
        std::memset(&n, 0, sizeof n); // the kernel refuses a buffer that is not zeroed
        if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &n) == 0)
            break;
        if (errno == EINTR && interruptible)
            return std::nullopt;
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
