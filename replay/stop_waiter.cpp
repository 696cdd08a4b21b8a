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
    return wait_until(tid, std::chrono::steady_clock::now() + timeout);
}

std::optional<StopInfo> StopWaiter::wait_until(pid_t tid, std::chrono::steady_clock::time_point deadline)
{
    for (;;) {
        if (auto s = take(tid))
            return s;
        collect();
        if (auto s = take(tid))
            return s;
        auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero())
            return std::nullopt;
        // Wake at least every 100 ms: a SIGCHLD can merge with an earlier one.
        auto wait = std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(100));
        struct timespec ts = {static_cast<time_t>(wait.count() / 1000000000),
                              static_cast<long>(wait.count() % 1000000000)};
        struct pollfd p = {sigchld_.get(), POLLIN, 0};
        ::ppoll(&p, 1, &ts, nullptr);
    }
}

} // namespace rw::replay
