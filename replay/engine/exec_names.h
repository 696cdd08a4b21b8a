// How the kernel names what an exec loads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rw::replay {

// The name the kernel gives the image an execve or execveat loads: what
// AT_EXECFN points to, and the first string of the new initial stack.
// nullopt for an execveat of an empty path without AT_EMPTY_PATH (it fails
// before anything is named).
std::optional<std::string> exec_name(long nr, int dirfd, const std::string& path, uint64_t flags);

// A path as /proc/PID/maps shows it, without the kernel's " (deleted)".
std::string live_path(const std::string& maps_path);

// The directory D for which D/`relative` is `image` (both lexically
// normal, no ".." that leaves D): where a relative exec finds the image.
std::optional<std::string> directory_reaching(const std::string& relative, const std::string& image);

} // namespace rw::replay
