// What the kernel itself loads at execve (the program and its interpreter)
// must come from the trace, at the original paths, or the program's initial
// stack (which holds the exec'd path) would differ. Replay runs in a private
// mount namespace where the trace's copies are bind-mounted over those paths;
// a path that no longer exists is recreated inside an overlay.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "unique_fd.h"

namespace rw::replay {

struct BindMount {
    std::string target; // path the program expects
    std::string source; // the trace's copy
};

// A trace file the replay bind-mounted over a path, by content hash: what a
// persistent landmark must mount again where its processes are restored.
struct MountedFile {
    std::string target;
    std::string content_hash;
    bool operator==(const MountedFile&) const = default;
};

// In the calling process (already in the private namespace). Returns an
// empty string or what went wrong.
std::string apply_bind_mounts(const std::vector<BindMount>& binds);

// Makes the calling process's mount namespace private (unshare + MS_PRIVATE).
std::string enter_private_mount_namespace();

// Applies bind mounts inside the mount namespace of `pid`, from a short-lived
// helper process. Returns an empty string or what went wrong.
std::string apply_bind_mounts_in(pid_t pid, const std::vector<BindMount>& binds);

// The trace's copy of an executable as the root of a mount that is attached
// nowhere, made in the mount namespace of `pid` (OPEN_TREE_CLONE): what a
// program has after it bind-mounts a file, opens it and unmounts it lazily,
// and what /proc/PID/maps then shows as "/". `out` is an O_PATH descriptor
// of it. Returns an empty string or what went wrong.
std::string detached_copy_in(pid_t pid, const std::string& source, UniqueFd& out);

} // namespace rw::replay
