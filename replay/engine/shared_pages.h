// The pages a process still shares with another copy of it (a snapshot it
// was forked from): written first, each would be copied then. A run timed
// from a restored snapshot copies them before its clock starts
// (Replayer::copy_shared_pages), so that its time is the program's own.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace rw::replay {

// [start, end) ranges of present pages of pid's private writable mappings
// that pid does not map alone (/proc/PID/pagemap). Ranges a few pages apart
// in one mapping are merged (one madvise call each); with more than `most`,
// the largest `most`. Empty if pagemap cannot be read.
std::vector<std::pair<uint64_t, uint64_t>> shared_page_runs(pid_t pid, size_t most);

} // namespace rw::replay
