// How much memory the machine, and the memory cgroup rewind runs in, can
// still give. Snapshots are forked copies of the replayed processes, free
// when taken; but each then keeps every page the live process writes
// afterwards, so a program that rewrites a large heap makes each snapshot
// cost about its whole heap. The timeline lets snapshots go while memory
// is short rather than let the kernel kill what the user is debugging.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace rw::replay {

struct MemoryHeadroom {
    uint64_t available = 0; // bytes that can still be had without reclaiming more than page cache
    uint64_t total = 0;     // what that is out of: the machine's memory, or the cgroup's limit if lower
};

std::optional<MemoryHeadroom> memory_headroom();

// Below a 32nd of the total (at least 64 MiB) left, past `reserve`
// bytes still to come: the live processes copy a page of a snapshot's at
// each first write, up to all of their anonymous memory.
bool memory_is_short(const MemoryHeadroom& h, uint64_t reserve = 0);
bool memory_is_short(uint64_t reserve = 0);

// The anonymous memory `pid` has in RAM (RssAnon), 0 if it cannot be read.
uint64_t anonymous_resident(pid_t pid);

// Waits, up to `limit`, until none of `pids` holds memory any more (each
// is gone or a zombie): a killed process's pages are freed as it exits,
// not as the signal is sent.
void wait_until_released(const std::vector<pid_t>& pids, std::chrono::milliseconds limit);

} // namespace rw::replay
