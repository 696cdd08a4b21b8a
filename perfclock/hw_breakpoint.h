// Hardware-breakpoint execution counters (perf_event_open, PERF_TYPE_BREAKPOINT):
// the CPU's debug registers count, exactly, how often an instruction address
// executes in a thread, and can stop the thread at the N-th execution. This
// is the software clock's unit of progress inside an event interval.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace rw::perfclock {

enum class BreakpointKind { Execute, Write, ReadWrite };

class BreakpointCounter {
public:
    // Counts executions of `addr` by thread `tid` (0: the calling thread).
    // With `stop_after` > 0 the thread receives SIGTRAP (si_code TRAP_PERF)
    // exactly at that execution. Throws std::system_error.
    BreakpointCounter(pid_t tid, uint64_t addr, uint64_t stop_after = 0);
    // The general form: an execution breakpoint, or a data watchpoint of
    // `len` bytes (1, 2, 4, 8; x86 traps after the accessing instruction).
    // The SIGTRAP's si_perf_data carries `tag`.
    BreakpointCounter(pid_t tid, BreakpointKind kind, uint64_t addr, uint32_t len, uint64_t stop_after, uint64_t tag);
    ~BreakpointCounter();
    BreakpointCounter(const BreakpointCounter&) = delete;
    BreakpointCounter& operator=(const BreakpointCounter&) = delete;
    BreakpointCounter(BreakpointCounter&& other) noexcept;

    uint64_t count() const;
    void reset();
    void enable();
    void disable();
    uint64_t address() const { return addr_; }
    uint64_t tag() const { return tag_; }
    int fd() const { return fd_; } // the perf event (for a BPF filter on its overflows)

private:
    int fd_ = -1;
    uint64_t addr_;
    uint64_t tag_ = 0;
};

struct BreakpointStatus {
    bool available = false;
    std::string description;
};

// Counts a known number of calls of a function in this process.
BreakpointStatus probe_breakpoints();
// probe_breakpoints(), once per process: some hypervisors accept the perf
// event but never let the debug registers fire.
bool breakpoints_work();

} // namespace rw::perfclock
