#include "stop_waiter.h"

#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>
#include <time.h>

#include <cerrno>
#include <csignal>
#include <string>
#include <system_error>
#include <utility>

#include "steady_now.h"

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

StopWaiter::~StopWaiter()
{
    if (quiet_timer_)
        timer_delete(*quiet_timer_);
}

namespace {

// The quiet wait's timer signal. Every syscall it interrupts is restarted
// (SA_RESTART), but for the listener's receive, which then returns EINTR:
// the kernel backs a syscall to be restarted up to its syscall instruction
// before the handler runs, its number in rax again, and the handler steps
// over it with -EINTR as its result. (Landing just before the receive
// starts does the same: the wait loop looks for stops, then receives.)
int quiet_timer_signal()
{
    return SIGRTMIN + 5;
}

volatile sig_atomic_t quiet_listener = -1; // the listener whose receive the timer ends

void on_quiet_timer(int, siginfo_t*, void* context)
{
    greg_t* r = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
    const auto* insn = reinterpret_cast<const unsigned char*>(r[REG_RIP]);
    if (quiet_listener >= 0 && r[REG_RAX] == SYS_ioctl && r[REG_RDI] == quiet_listener &&
        static_cast<unsigned long>(r[REG_RSI]) == SECCOMP_IOCTL_NOTIF_RECV && insn[0] == 0x0f && insn[1] == 0x05) {
        r[REG_RIP] += 2;
        r[REG_RAX] = -EINTR;
    }
}

} // namespace

void StopWaiter::arm_quiet_timer()
{
    // Often enough that a stop in a quiet run is seen at once to a person;
    // rarely enough to cost nothing (two syscalls per tick).
    constexpr long kEveryNs = 20 * 1000 * 1000;
    if (quiet_timer_armed_)
        return;
    if (!quiet_timer_) {
        struct sigaction sa = {};
        sa.sa_sigaction = on_quiet_timer;
        sa.sa_flags = SA_RESTART | SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigset_t mine;
        sigemptyset(&mine);
        sigaddset(&mine, quiet_timer_signal());
        struct sigevent ev = {};
        ev.sigev_notify = SIGEV_THREAD_ID;
        ev.sigev_signo = quiet_timer_signal();
        ev._sigev_un._tid = static_cast<pid_t>(::gettid()); // (sigev_notify_thread_id: newer headers)
        timer_t timer;
        if (sigaction(quiet_timer_signal(), &sa, nullptr) != 0 || pthread_sigmask(SIG_UNBLOCK, &mine, nullptr) != 0 ||
            timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0)
            throw std::system_error(errno, std::generic_category(), "the timer of quiet waits");
        quiet_timer_ = timer;
    }
    quiet_listener = notifier_->fd();
    struct itimerspec every = {{0, kEveryNs}, {0, kEveryNs}};
    if (timer_settime(*quiet_timer_, 0, &every, nullptr) != 0)
        throw std::system_error(errno, std::generic_category(), "timer_settime");
    quiet_timer_armed_ = true;
}

void StopWaiter::quiet_waits_over()
{
    if (!quiet_timer_armed_)
        return;
    struct itimerspec off = {};
    timer_settime(*quiet_timer_, 0, &off, nullptr);
    quiet_timer_armed_ = false;
}

void StopWaiter::serve_notifications(SyscallNotifier* notifier)
{
    notifier_ = notifier;
    waits_.reset(epoll_create1(EPOLL_CLOEXEC));
    if (!waits_)
        throw std::system_error(errno, std::generic_category(), "epoll_create1");
    for (int fd : {notifier_->fd(), sigchld_.get()}) {
        struct epoll_event e = {};
        e.events = EPOLLIN;
        e.data.fd = fd;
        if (epoll_ctl(waits_.get(), EPOLL_CTL_ADD, fd, &e) != 0)
            throw std::system_error(errno, std::generic_category(), "epoll_ctl");
    }
}

bool StopWaiter::reap_one()
{
    int status = 0;
    pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
    if (tid <= 0)
        return false;
    StopInfo stop = decode_wait_status(status);
    bool ended = stop.kind == StopInfo::Kind::Exited || stop.kind == StopInfo::Kind::Signaled;
    if (ended || (stop.kind == StopInfo::Kind::PtraceEvent && stop.event == PTRACE_EVENT_EXEC))
        forget_code_file(tid); // a new address space, or none
    if (discarded_.count(tid)) {
        if (ended)
            discarded_.erase(tid);
        return true;
    }
    pending_[tid].push_back(stop);
    return true;
}

void StopWaiter::drain_sigchld()
{
    // SIGCHLD is not a real-time signal: however many children changed
    // state, one read empties the descriptor.
    struct signalfd_siginfo si;
    (void)!::read(sigchld_.get(), &si, sizeof(si));
}

std::optional<StopInfo> StopWaiter::take(pid_t tid)
{
    if (auto s = take_collected(tid))
        return s;
    while (reap_one()) {
    }
    return take_collected(tid);
}

bool StopWaiter::has_pending(pid_t tid)
{
    while (reap_one()) {
    }
    auto it = pending_.find(tid);
    return it != pending_.end() && !it->second.empty();
}

std::optional<StopInfo> StopWaiter::take_collected(pid_t tid)
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
    return wait_until(tid, steady_now() + timeout);
}

std::optional<StopInfo> StopWaiter::wait_until(pid_t tid, std::chrono::steady_clock::time_point deadline)
{
    // Most stops are there already: reaping costs one wait4 then. The
    // SIGCHLD they raised is only drained before sleeping on it. A tracee
    // just resumed on this CPU (the replay is pinned to one) has not run
    // yet: yielding to it once is cheaper than sleeping on a timeout.
    bool yielded = false;
    for (;;) {
        if (auto s = take_collected(tid))
            return s;
        if (reap_one())
            continue;
        if (!yielded) {
            yielded = true;
            sched_yield();
            continue;
        }
        drain_sigchld();
        if (reap_one()) // a stop that came between the two
            continue;
        auto left = deadline - steady_now();
        if (left <= std::chrono::steady_clock::duration::zero())
            return std::nullopt;
        // Wake at least every 100 ms: a SIGCHLD can merge with an earlier one.
        auto wait = std::min<std::chrono::nanoseconds>(left, std::chrono::milliseconds(100));
        struct timespec ts = {static_cast<time_t>(wait.count() / 1000000000),
                              static_cast<long>(wait.count() % 1000000000)};
        struct pollfd p[2] = {{sigchld_.get(), POLLIN, 0}, {notifier_ ? notifier_->fd() : -1, POLLIN, 0}};
        if (::ppoll(p, 2, &ts, nullptr) > 0 && (p[1].revents & POLLIN))
            take_notification();
    }
}

void StopWaiter::take_notification(bool interruptible)
{
    auto call = notifier_->receive(interruptible);
    if (!call)
        return;
    if (call->tid == notifier_->claimed() && call->tid != 0) {
        held_ = call;
    } else if (!notifier_->may_run || notifier_->may_run(call->tid)) {
        notifier_->let_run(call->id); // an injected call, a throwaway copy's
    } else {
        notifier_->refuse(call->id);
        if (!notifier_->refused)
            notifier_->refused = "thread " + std::to_string(call->tid) + " made syscall " + std::to_string(call->nr) +
                                 " where replay expected it to stay stopped";
    }
}

StopWaiter::Arrival StopWaiter::wait_call_or_stop(pid_t tid, std::chrono::steady_clock::time_point deadline, bool quiet)
{
    if (!quiet)
        quiet_waits_over();
    // The thread's stops since it was resumed raise SIGCHLD after the last
    // drain: the descriptor says when one may have come.
    for (;;) {
        if (held_ && held_->tid == tid) {
            Arrival a;
            a.call = std::exchange(held_, std::nullopt);
            return a;
        }
        if (auto s = take_collected(tid))
            return Arrival{s, std::nullopt};
        if (quiet) {
            arm_quiet_timer();
            if (take_notification(true), held_ && held_->tid == tid)
                continue;
            // The timer (or another call, or one withdrawn): any stop since?
            drain_sigchld();
            while (reap_one()) {
            }
            if (coarse_now() >= deadline)
                return {};
            continue;
        }
        // The deadline (seconds away) is looked at only when nothing came
        // for a while: a clock read per call would be a syscall more.
        struct epoll_event ready[2];
        int n = epoll_wait(waits_.get(), ready, 2, 100);
        if (n <= 0) {
            if (coarse_now() >= deadline)
                return {};
            continue;
        }
        bool call = false, stop = false;
        for (int i = 0; i < n; ++i)
            (ready[i].data.fd == sigchld_.get() ? stop : call) = true;
        if (call)
            take_notification();
        if (stop) {
            drain_sigchld();
            while (reap_one()) {
            }
        }
    }
}

} // namespace rw::replay
