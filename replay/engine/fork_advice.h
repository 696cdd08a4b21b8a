// Memory a process keeps out of its fork children (MADV_WIPEONFORK: the
// child gets zeros; MADV_DONTFORK: the child does not get it at all). The
// replay runs these advices for real, so that the program's own forks
// behave as they did; its snapshots are forks too, and must copy that
// memory: the advice is lifted around them and given back after.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace rw::replay {

struct ForkAdvice {
    uint64_t start = 0, end = 0;
    bool wipe = false;      // MADV_WIPEONFORK ("wf" in /proc/PID/smaps)
    bool dont_copy = false; // MADV_DONTFORK ("dc")
};

// The ranges of pid's memory under either advice (empty if none, or if
// smaps cannot be read).
std::vector<ForkAdvice> fork_advice(pid_t pid);

} // namespace rw::replay
