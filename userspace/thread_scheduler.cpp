#include "thread_scheduler.h"

#include <sys/syscall.h>

#include <algorithm>

namespace rw {

bool keeps_cpu(int nr, const std::array<uint64_t, 6>& args)
{
    switch (nr) {
    // Order-sensitive: they change what other threads see (mappings, new
    // tasks, the thread's own exit and the kernel's CLEARTID write).
    case SYS_clone:
    case SYS_clone3:
    case SYS_fork:
    case SYS_vfork:
    case SYS_execve:
    case SYS_execveat:
    case SYS_exit:
    case SYS_exit_group:
    case SYS_mmap:
    case SYS_munmap:
    case SYS_mprotect:
    case SYS_mremap:
    case SYS_madvise:
    case SYS_brk:
    // Never block.
    case SYS_rt_sigaction:
    case SYS_rt_sigprocmask:
    case SYS_sigaltstack:
    case SYS_set_robust_list:
    case SYS_get_robust_list:
    case SYS_set_tid_address:
    case SYS_rseq:
    case SYS_arch_prctl:
    case SYS_prctl:
    case SYS_getpid:
    case SYS_gettid:
    case SYS_getppid:
    case SYS_getuid:
    case SYS_geteuid:
    case SYS_getgid:
    case SYS_getegid:
    case SYS_gettimeofday:
    case SYS_clock_gettime:
    case SYS_clock_getres:
    case SYS_time:
    case SYS_getrandom:
    case SYS_fstat:
    case SYS_newfstatat:
    case SYS_statx:
    case SYS_lseek:
    case SYS_close:
    case SYS_dup:
    case SYS_dup2:
    case SYS_dup3:
    case SYS_getcwd:
    case SYS_uname:
    case SYS_sched_getaffinity:
    case SYS_sched_setaffinity:
    case SYS_getrlimit:
    case SYS_prlimit64:
    case SYS_sysinfo:
    case SYS_getrusage:
    case SYS_tgkill:
    case SYS_tkill:
        return true;
    case SYS_futex: {
        int op = static_cast<int>(args[1] & 127);
        return op == 1 /* WAKE */ || op == 3 /* REQUEUE */ || op == 4 /* CMP_REQUEUE */ || op == 5 /* WAKE_OP */ ||
               op == 10 /* WAKE_BITSET */;
    }
    default:
        // Anything else may block (a read, a wait, sched_yield…): others run meanwhile.
        return false;
    }
}

void ThreadScheduler::serialize(Tid tgid, Tid runner, Clock::time_point now)
{
    auto [it, inserted] = procs_.try_emplace(tgid);
    if (inserted) {
        it->second.running = runner;
        it->second.deadline = now + slice_;
        it->second.since = now;
    }
}

bool ThreadScheduler::want(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end())
        return true;
    Process& p = it->second;
    if (p.running == tid)
        return true;
    if (!p.running) {
        p.running = tid;
        p.deadline = now + slice_;
        p.since = now;
        switches_++;
        return true;
    }
    if (std::find(p.waiting.begin(), p.waiting.end(), tid) == p.waiting.end())
        p.waiting.push_back(tid);
    return false;
}

std::optional<Tid> ThreadScheduler::next(Process& p, Clock::time_point now)
{
    p.running.reset();
    if (p.waiting.empty())
        return std::nullopt;
    size_t pick = chaos_ ? std::uniform_int_distribution<size_t>(0, p.waiting.size() - 1)(random_) : 0;
    p.running = p.waiting[pick];
    p.waiting.erase(p.waiting.begin() + static_cast<long>(pick));
    p.deadline = now + slice_;
    p.since = now;
    switches_++;
    return p.running;
}

std::optional<Tid> ThreadScheduler::yield(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end() || it->second.running != tid)
        return std::nullopt;
    return next(it->second, now);
}

std::optional<Tid> ThreadScheduler::gone(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end())
        return std::nullopt;
    Process& p = it->second;
    p.waiting.erase(std::remove(p.waiting.begin(), p.waiting.end(), tid), p.waiting.end());
    if (p.running != tid)
        return std::nullopt;
    return next(p, now);
}

std::optional<Tid> ThreadScheduler::running(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? std::nullopt : it->second.running;
}

ThreadScheduler::Clock::time_point ThreadScheduler::running_since(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? Clock::time_point{} : it->second.since;
}

size_t ThreadScheduler::waiting(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? 0 : it->second.waiting.size();
}

std::vector<Tid> ThreadScheduler::overdue(Clock::time_point now) const
{
    std::vector<Tid> out;
    for (const auto& [tgid, p] : procs_)
        if (p.running && !p.waiting.empty() && now >= p.deadline)
            out.push_back(*p.running);
    return out;
}

void ThreadScheduler::extend(Tid tgid, Clock::duration more)
{
    auto it = procs_.find(tgid);
    if (it != procs_.end())
        it->second.deadline = Clock::now() + more;
}

} // namespace rw
