// BPF filters on the hardware breakpoints of replay's searches
// (bpf/register_match.bpf.c, bpf/write_match.bpf.c,
// bpf/position_match.bpf.c): the breakpoint's
// overflow handler judges each execution in the kernel, and only the ones
// that may be what the search looks for stop the thread. Where a filter
// cannot be loaded (no BPF, not allowed), or REWIND_BPF_FILTERS=0 says
// not to (for comparisons), every execution stops as before.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "event.h"
#include "rewind_abi.h"

namespace rw::replay {

// Naming an anchor: stops only where the registers are the anchor's.
class RegisterMatchFilter {
public:
    // The process's filter, loaded at the first use; nullptr where it
    // cannot be (why: REWIND_DEBUG says so once).
    static RegisterMatchFilter* get();
    ~RegisterMatchFilter();

    // Filters the breakpoint `perf_fd` (sample period 1, sigtrap): its
    // traps stop the thread only where all of `want` but eflags and
    // orig_rax match, and at execution `last` whatever the registers.
    // Executions are counted from the attach. False if the kernel refuses.
    bool attach(int perf_fd, const Registers& want, uint64_t last);

    // Loaded, an open skeleton, is known only where get() makes one.
    struct Loaded;
    explicit RegisterMatchFilter(std::unique_ptr<Loaded> loaded);

private:
    std::unique_ptr<Loaded> loaded_;
};

// Finding a point in user code again (a signal delivered there): stops
// only where the registers are the point's and the pages' sum is the
// recorded one (rw_page_sum_step).
class PositionMatchFilter {
public:
    static PositionMatchFilter* get();
    ~PositionMatchFilter();

    // Filters the breakpoint `perf_fd` (sample period 1, sigtrap) for the
    // point `want` (all but eflags, orig_rax and the segments compared),
    // where `pages` (at most RW_SUM_PAGES, none: registers only) sum to
    // `sum`. False if the kernel refuses.
    bool attach(int perf_fd, const Registers& want, const std::vector<uint64_t>& pages, uint64_t sum);

    struct Loaded;
    explicit PositionMatchFilter(std::unique_ptr<Loaded> loaded);

private:
    std::unique_ptr<Loaded> loaded_;
};

// Stepping back from a watched write: stops a candidate only where it is
// about to write the watched bytes.
class WriteMatchFilter {
public:
    static constexpr size_t kMostCandidates = RW_WRITE_FORMS;

    static WriteMatchFilter* get();
    ~WriteMatchFilter();

    // Sets the forms of the candidates (as many as kMostCandidates) and
    // the watched bytes [lo, hi); the executions of all the breakpoints
    // filtered after it count towards `last`.
    void prepare(const std::vector<rw_write_form>& forms, uint64_t lo, uint64_t hi, uint64_t last);
    // Filters one candidate's breakpoint. False if the kernel refuses.
    bool attach(int perf_fd);

    // Loaded, an open skeleton, is known only where get() makes one.
    struct Loaded;
    explicit WriteMatchFilter(std::unique_ptr<Loaded> loaded);

private:
    std::unique_ptr<Loaded> loaded_;
};

} // namespace rw::replay
