// The recorder's scheduler for multithreaded processes: one thread of a
// process runs at a time, so the order in which threads touch shared memory
// is the order of the event stream, and replay reproduces even data races.
//
// A thread gives up the CPU when it enters a syscall that may block, and
// waits for it again when the syscall returns; the kernel side tells which
// (the syscall table's Blocking) and reports such entries. Other syscalls
// run through without a stop. A thread that runs past its time slice while
// others wait is preempted (the supervisor decides where: at the exit of a
// syscall if it is in one). Processes run in parallel with each other.
//
// Processes that share memory run the same way, as one group
// (memory_groups.h): the `tgid` the functions below take is the key a
// process is scheduled under, its own id or its group's.
//
// This class is only the bookkeeping; the supervisor stops and resumes.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "event.h"

namespace rw {

class ThreadScheduler {
public:
    using Clock = std::chrono::steady_clock;

    // `chaos`: the next thread is a random waiting one rather than the one
    // that waited longest, so that recordings explore other interleavings.
    ThreadScheduler(std::chrono::milliseconds slice, bool chaos)
        : slice_(slice), chaos_(chaos), random_(std::random_device{}())
    {}

    bool serialized(Tid tgid) const { return procs_.count(tgid) != 0; }
    // The process has a second thread; `runner` is the one running now.
    void serialize(Tid tgid, Tid runner, Clock::time_point now);
    // The process exec'd or ended: its one thread runs freely again.
    void forget(Tid tgid) { procs_.erase(tgid); }
    // The threads scheduled under `from` are scheduled under `into` from
    // now on (both serialized); `runner` has the CPU (it had one of them),
    // the others wait.
    void merge(Tid from, Tid into, Tid runner, Clock::time_point now);

    // `tid` is stopped and wants to run. True: it has the CPU now (resume
    // it). False: it waits its turn.
    bool want(Tid tgid, Tid tid, Clock::time_point now);
    // The running thread gives up the CPU; the thread to resume next, if any.
    // `steps_aside` (sched_yield): when it wants the CPU back, a thread of
    // its process that stepped aside before it and is on its way back (its
    // call cannot block) runs first, as the kernel runs every other runnable
    // thread before a yielding one. Without a time limit a thread that
    // never comes back (stopped, say) would hold the yielder off for good.
    std::optional<Tid> yield(Tid tgid, Tid tid, Clock::time_point now, bool steps_aside = false);
    // A thread is gone; if it had the CPU, the thread to resume next.
    std::optional<Tid> gone(Tid tgid, Tid tid, Clock::time_point now);

    std::optional<Tid> running(Tid tgid) const;
    // Since when the running thread has had the CPU.
    Clock::time_point running_since(Tid tgid) const;
    size_t waiting(Tid tgid) const;
    // Running threads past their slice while another thread of theirs waits.
    std::vector<Tid> overdue(Clock::time_point now) const;
    // Gives the running thread more time before it counts as overdue.
    void extend(Tid tgid, Clock::duration more);
    // Processes where no thread runs while some wait, because a thread that
    // stepped aside has not come back within a time slice: (key, the thread
    // that has the CPU now).
    std::vector<std::pair<Tid, Tid>> overdue_turns(Clock::time_point now);

private:
    struct Process {
        std::optional<Tid> running;
        Clock::time_point deadline;
        Clock::time_point since;
        std::deque<Tid> waiting;
        struct Aside {
            Clock::time_point since;
            uint64_t order; // of the steps aside
        };
        std::map<Tid, Aside> stepped_aside; // not back yet
        uint64_t asides = 0;
    };
    std::optional<Tid> next(Process& p, Clock::time_point now);
    // Whether a thread that stepped aside less than a slice ago, before
    // `before` did if given, has not asked for the CPU again.
    bool someone_aside(const Process& p, Clock::time_point now, std::optional<uint64_t> before) const;

    std::chrono::milliseconds slice_;
    bool chaos_;
    std::minstd_rand random_;
    std::map<Tid, Process> procs_;
};

} // namespace rw
