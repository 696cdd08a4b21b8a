// A BPF filter on the hardware breakpoint a label counts with
// (bpf/register_match.bpf.c): the breakpoint's overflow handler compares
// the thread's registers with the wanted ones, and only a match, or the
// execution past the limit, stops the thread. Where it cannot be loaded
// (no BPF, not allowed, an older libbpf), every execution stops as before.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "event.h"

namespace rw::replay {

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

private:
    struct Loaded;
    explicit RegisterMatchFilter(std::unique_ptr<Loaded> loaded);
    std::unique_ptr<Loaded> loaded_;
};

} // namespace rw::replay
