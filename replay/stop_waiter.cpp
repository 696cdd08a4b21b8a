#include "stop_waiter.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <system_error>

namespace rw::replay {

StopWaiter::StopWaiter()
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigchld_.reset(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigchld_)
        throw std::system_error(errno, std::generic_category(), "signalfd");
}

StopWaiter::~StopWaiter() = default;

void StopWaiter::collect()
{
    struct signalfd_siginfo si;
    while (::read(sigchld_.get(), &si, sizeof(si)) == sizeof(si)) {
    }
    for (;;) {
        int status = 0;
        pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
        if (tid <= 0)
            break;
        StopInfo stop = decode_wait_status(status);
        if (discarded_.count(tid)) {
            if (stop.kind == StopInfo::Kind::Exited || stop.kind == StopInfo::Kind::Signaled)
                discarded_.erase(tid);
            continue;
        }
        pending_[tid].push_back(stop);
    }
}

std::optional<StopInfo> StopWaiter::take(pid_t tid)
{
    auto it = pending_.find(tid);
    if (it == pending_.end() || it->second.empty())
        return std::nullopt;
    StopInfo s = it->second.front();
    it->second.pop_front();
    return s;
}

std::optional<StopInfo> StopWaiter::wait_for(pid_t tid, std::chrono::milliseconds timeout)
{
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto s = take(tid))
            return s;
        collect();
        if (auto s = take(tid))
            return s;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return std::nullopt;
        struct pollfd p = {sigchld_.get(), POLLIN, 0};
        // Wake at least every 100 ms: a SIGCHLD can merge with an earlier one.
        ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    }
}

} // namespace rw::replay
