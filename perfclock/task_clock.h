// A thread's own running time, kept by the kernel (perf's task-clock
// software event), and an alarm on it. The clock advances only while the
// thread runs: not while the tracer handles its stops, not while it waits
// for a CPU. An alarm raised by a timer in the tracer comes late by however
// long the tracer takes to be scheduled and to stop the thread (measured:
// often several times the span asked for); this one stops the thread
// itself, with SIGTRAP (si_code TRAP_PERF), after it ran the time asked.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>

namespace rw::perfclock {

class TaskClock {
public:
    // Starts counting `tid`'s running time now. With `alarm_every`, the
    // thread receives SIGTRAP (si_perf_data `tag`) each time it has run that
    // long more. Throws std::system_error.
    explicit TaskClock(pid_t tid, std::optional<std::chrono::nanoseconds> alarm_every = std::nullopt, uint64_t tag = 0);
    ~TaskClock();
    TaskClock(const TaskClock&) = delete;
    TaskClock& operator=(const TaskClock&) = delete;

    // How long the thread has run since this clock started.
    std::chrono::nanoseconds elapsed() const;

private:
    int fd_ = -1;
};

// Whether task-clock alarms can be set here (perf software events allowed).
bool task_clock_works();

// Starts a clock in `into` where task clocks work and `tid` accepts one;
// false (and `into` empty) otherwise: the caller falls back to wall-clock
// time.
bool try_start_task_clock(std::optional<TaskClock>& into, pid_t tid,
                          std::optional<std::chrono::nanoseconds> alarm_every = std::nullopt, uint64_t tag = 0);

} // namespace rw::perfclock
