// std::chrono::steady_clock::now() without reading the TSC in user mode.
//
// The vDSO's precise clocks read the TSC, which faults in a thread that
// traps rdtsc (own_tsc_trap.h). steady_now() is a syscall instead: the
// kernel reads the same clock (CLOCK_MONOTONIC, steady_clock's), so its
// time points mix with steady_clock's. coarse_now() is the same clock as of
// the last timer tick (a few ms behind), read from the vDSO without the
// TSC: for deadlines of a second or more checked at every event.
#pragma once

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <chrono>

namespace rw {

inline std::chrono::steady_clock::time_point steady_now()
{
    struct timespec ts = {};
    ::syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    return std::chrono::steady_clock::time_point(std::chrono::seconds(ts.tv_sec) +
                                                 std::chrono::nanoseconds(ts.tv_nsec));
}

inline std::chrono::steady_clock::time_point coarse_now()
{
    struct timespec ts = {};
    ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return std::chrono::steady_clock::time_point(std::chrono::seconds(ts.tv_sec) +
                                                 std::chrono::nanoseconds(ts.tv_nsec));
}

} // namespace rw
