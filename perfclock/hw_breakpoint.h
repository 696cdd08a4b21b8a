// Hardware-breakpoint execution counters (perf_event_open, PERF_TYPE_BREAKPOINT):
// the CPU's debug registers count, exactly, how often an instruction address
// executes in a thread, and can stop the thread at the N-th execution. This
// is the software clock's unit of progress inside an event interval.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace rw::perfclock {

class BreakpointCounter {
public:
    // Counts executions of `addr` by thread `tid` (0: the calling thread).
    // With `stop_after` > 0 the thread receives SIGTRAP (si_code TRAP_PERF)
    // exactly at that execution. Throws std::system_error.
    BreakpointCounter(pid_t tid, uint64_t addr, uint64_t stop_after = 0);
    ~BreakpointCounter();
    BreakpointCounter(const BreakpointCounter&) = delete;
    BreakpointCounter& operator=(const BreakpointCounter&) = delete;
    BreakpointCounter(BreakpointCounter&& other) noexcept;

    uint64_t count() const;
    void reset();
    void enable();
    void disable();
    uint64_t address() const { return addr_; }

private:
    int fd_ = -1;
    uint64_t addr_;
};

struct BreakpointStatus {
    bool available = false;
    std::string description;
};

// Counts a known number of calls of a function in this process.
BreakpointStatus probe_breakpoints();

} // namespace rw::perfclock
