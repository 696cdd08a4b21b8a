// The trace files the replay bind-mounted in its mount namespace: what a
// landmark records, so that where it is restored the same files are found
// at the same paths.
#include <algorithm>
#include <set>

#include "exec_names.h"
#include "replayer.h"

namespace rw::replay {

std::vector<MountedFile> Replayer::mapped_copies(const ExecEvent& e)
{
    std::vector<MountedFile> out;
    std::set<std::string> seen;
    for (const auto& m : e.mappings) {
        // A memfd or a detached mount is given to the exec as a descriptor
        // (replay_exec.cpp).
        if (m.content_hash.empty() || !bind_mountable(m.path))
            continue;
        std::string path = live_path(m.path);
        if (seen.insert(path).second)
            out.push_back({path, m.content_hash});
    }
    return out;
}

void Replayer::note_mounts(const ExecEvent& e)
{
    for (MountedFile& f : mapped_copies(e))
        if (std::find(mounted_.begin(), mounted_.end(), f) == mounted_.end())
            mounted_.push_back(std::move(f));
}

std::vector<BindMount> Replayer::binds_of(const std::vector<MountedFile>& files) const
{
    std::vector<BindMount> binds;
    for (const auto& f : files)
        binds.push_back({f.target, checked_copy(initial_tid_, f.content_hash, f.target)});
    return binds;
}

} // namespace rw::replay
