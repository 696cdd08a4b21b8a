// Collects ptrace stops for every traced task, so the replayer can wait for
// one task while others' stops (a child's first stop, an exit) are kept.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <ctime>
#include <deque>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "syscall_notifier.h"
#include "tracee.h"
#include "unique_fd.h"

namespace rw::replay {

class StopWaiter {
public:
    StopWaiter();
    ~StopWaiter();
    StopWaiter(const StopWaiter&) = delete;
    StopWaiter& operator=(const StopWaiter&) = delete;

    // The next stop of `tid`; nullopt if none came within `timeout`.
    std::optional<StopInfo> wait_for(pid_t tid, std::chrono::milliseconds timeout);
    std::optional<StopInfo> wait_until(pid_t tid, std::chrono::steady_clock::time_point deadline);
    // A stop of `tid` that has come, without waiting.
    std::optional<StopInfo> take(pid_t tid);
    // Whether a stop of `tid` has come and not been taken yet.
    bool has_pending(pid_t tid);
    // Gives `stop` back, to be the next one taken for `tid`.
    void put_back(pid_t tid, const StopInfo& stop) { pending_[tid].push_front(stop); }
    // Drops whatever is pending for a task that is gone.
    void forget(pid_t tid) { pending_.erase(tid); }
    // Stops of this process are of no interest any more (a killed copy).
    void discard(pid_t tid)
    {
        pending_.erase(tid);
        discarded_.insert(tid);
    }

    // Syscall notifications come while waiting: the claimed thread's are
    // kept for wait_call_or_stop, the others' calls run.
    void serve_notifications(SyscallNotifier* notifier);
    // The claimed thread's next syscall notification or its next stop,
    // whichever comes first; neither if nothing came by `deadline`.
    // `quiet`: nothing is expected to stop the thread (no debugger trap in
    // its process, no interrupt due). The wait is then the listener's own
    // blocking receive, a tenth cheaper per call than a wait in epoll for
    // either; a timer interrupts it every few milliseconds, so that a stop
    // (a program that diverged into a fault, a signal from outside) is
    // still seen, a little later. quiet_waits_over() stops that timer.
    struct Arrival {
        std::optional<StopInfo> stop;
        std::optional<SyscallNotification> call;
    };
    Arrival wait_call_or_stop(pid_t tid, std::chrono::steady_clock::time_point deadline, bool quiet = false);
    void quiet_waits_over();
    // A kept notification of a thread that is gone or no longer claimed.
    void forget_call() { held_.reset(); }

private:
    // Collects one stop of any task, without waiting; false if none.
    bool reap_one();
    void take_notification(bool interruptible = false);
    void arm_quiet_timer();
    std::optional<StopInfo> take_collected(pid_t tid);
    void drain_sigchld();
    UniqueFd sigchld_;
    // Both descriptors, registered once: a wait per served call is then
    // one epoll_wait, not a poll that registers and unregisters both.
    UniqueFd waits_;
    // Interrupts quiet waits (wait_call_or_stop) while armed.
    std::optional<timer_t> quiet_timer_;
    bool quiet_timer_armed_ = false;
    std::unordered_map<pid_t, std::deque<StopInfo>> pending_;
    std::unordered_set<pid_t> discarded_;
    SyscallNotifier* notifier_ = nullptr;
    std::optional<SyscallNotification> held_; // the claimed thread's, not yet taken
};

} // namespace rw::replay
