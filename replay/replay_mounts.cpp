// The trace files the replay bind-mounted in its mount namespace: what a
// landmark records, so that where it is restored the same files are found
// at the same paths.
#include <algorithm>
#include <set>

#include "replayer.h"

namespace rw::replay {

void Replayer::note_mounts(const ExecEvent& e)
{
    // The same choice of mappings as binds_for.
    std::set<std::string> seen;
    for (const auto& m : e.mappings) {
        if (m.content_hash.empty() || m.path.empty() || m.path[0] != '/')
            continue;
        std::string path = m.path;
        if (auto pos = path.rfind(" (deleted)"); pos != std::string::npos && pos + 10 == path.size())
            path.resize(pos);
        if (!seen.insert(path).second)
            continue;
        MountedFile f{path, m.content_hash};
        if (std::find(mounted_.begin(), mounted_.end(), f) == mounted_.end())
            mounted_.push_back(f);
    }
}

std::vector<BindMount> Replayer::binds_of(const std::vector<MountedFile>& files) const
{
    std::vector<BindMount> binds;
    for (const auto& f : files)
        binds.push_back({f.target, checked_copy(initial_tid_, f.content_hash, f.target)});
    return binds;
}

} // namespace rw::replay
