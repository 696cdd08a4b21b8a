// How the kernel names what an exec loads, and which of those names a
// replay can recreate by bind-mounting the trace's copy over a path.
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

// An exec that reaches its file through a descriptor of the caller's:
// execveat's "/dev/fd/N", or a path through /dev/fd, /proc/self/fd or
// /proc/thread-self/fd. `rest` is empty where the descriptor is the file
// itself, else a path relative to it as a directory.
struct DescriptorRoute {
    int fd = -1;
    std::string rest;
};
std::optional<DescriptorRoute> descriptor_route(const std::string& name);

// A path as /proc/PID/maps shows it, without the kernel's " (deleted)".
std::string live_path(const std::string& maps_path);

// The name a memfd was created with, from its path in /proc/PID/maps
// ("/memfd:NAME (deleted)").
std::optional<std::string> memfd_name(const std::string& maps_path);

// The kernel shows a file that is the root of a detached mount (a bind
// mount of the file, then umount -l) as "/".
inline bool detached_mount_root(const std::string& maps_path)
{
    return maps_path == "/";
}

// Whether a bind mount over a path in the replay's mount namespace makes a
// file show as `maps_path`: an absolute path, neither a memfd nor a
// detached mount.
bool bind_mountable(const std::string& maps_path);

// The directory D for which D/`relative` is `image` (both lexically
// normal, no ".." that leaves D): where a relative exec finds the image.
std::optional<std::string> directory_reaching(const std::string& relative, const std::string& image);

} // namespace rw::replay
