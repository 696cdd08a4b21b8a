// Which pages a process writes between two points: how a position in user
// code is told apart from other executions of the same instruction with the
// same registers (a loop that counts in memory). See page_digest.h for the
// digest of those pages that a trace keeps.
//
// The kernel's soft-dirty bits say it at the cost of reading the page map,
// where they work; some kernels have them configured out, or never set
// them (measured on a 6.18 guest). There, every present writable page is
// hashed at the start and again at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rw {

class WrittenPages {
public:
    // From now on. Hashing stops past `max_bytes` of resident memory: then
    // since() cannot tell and says so.
    explicit WrittenPages(pid_t pid, uint64_t max_bytes = uint64_t(512) << 20);

    // The writable pages written since the constructor, in address order,
    // at most `limit` of them; nullopt when that cannot be known.
    std::optional<std::vector<uint64_t>> since(size_t limit) const;

    // Whether this kernel sets soft-dirty bits (probed once, on ourselves).
    static bool soft_dirty_works();

private:
    pid_t pid_;
    bool soft_dirty_;
    bool complete_ = true;
    std::vector<std::pair<uint64_t, uint64_t>> hashes_; // (page, xxh3), in address order
};

} // namespace rw
