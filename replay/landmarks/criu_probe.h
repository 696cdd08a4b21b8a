// Whether persistent landmarks work on this machine: `criu check` passing is
// not enough (a sandbox, a cgroup or a CPU feature can still make every dump
// or restore fail), so the probe does what a landmark does to a process of
// its own.
#pragma once

#include <string>

namespace rw::replay {

// Starts a small process, seizes it at a stop outside any system call, dumps
// it with dump_landmark, restores a copy and compares the copy's registers
// with the original's. Returns "" when all of that works, else what failed
// (with CRIU's error lines).
std::string probe_landmarks(const std::string& criu);

} // namespace rw::replay
