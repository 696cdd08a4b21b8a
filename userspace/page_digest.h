// Which pages a thread writes, and a digest of their content: how a
// preemption point in user code is told apart from other executions of the
// same instruction with the same registers (a loop that counts in memory).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace rw {

constexpr uint64_t kPageSize = 4096;

// Clears the soft-dirty bits of every page of the process (the kernel sets
// a page's bit again at its next write). False if the kernel refuses.
bool clear_soft_dirty(pid_t pid);

// The writable pages whose soft-dirty bit is set, in address order; at most
// `limit` of them (nullopt when the pagemap cannot be read).
std::optional<std::vector<uint64_t>> soft_dirty_pages(pid_t pid, size_t limit);

// xxh3 of the pages' addresses and content as the thread sees them now; an
// unreadable page contributes its address and a marker.
uint64_t page_digest(pid_t tid, const std::vector<uint64_t>& pages);

} // namespace rw
