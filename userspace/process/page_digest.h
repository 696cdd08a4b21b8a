// A digest of the content of the pages a thread writes (written_pages.h):
// how a position in user code is told apart from other executions of the
// same instruction with the same registers (a loop that counts in memory).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace rw {

constexpr uint64_t kPageSize = 4096;

// xxh3 of the pages' addresses and content as the thread sees them now; an
// unreadable page contributes its address and a marker.
uint64_t page_digest(pid_t tid, const std::vector<uint64_t>& pages);

// The pages' sum as replay's breakpoint filter computes it in the kernel
// (rw_page_sum_step, bpf/position_match.bpf.c); 0 for more than
// RW_SUM_PAGES pages or one that cannot be read.
uint64_t page_sum(pid_t tid, const std::vector<uint64_t>& pages);

// Adds the pages of the thread's current stack frame (from rsp's page to
// rbp's, if rbp points into it, at most a few), in order and once: a loop
// whose counter lives there, in code built without optimisation, is in the
// same registers at each round; its frame tells the rounds apart.
void add_stack_frame_pages(uint64_t rsp, uint64_t rbp, std::vector<uint64_t>& pages);

} // namespace rw
