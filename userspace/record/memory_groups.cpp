#include "memory_groups.h"

namespace rw {

Tid MemoryGroups::key_of(Tid tgid) const
{
    auto it = group_.find(tgid);
    return it == group_.end() ? tgid : it->second;
}

std::vector<Tid> MemoryGroups::members(Tid key) const
{
    auto it = members_.find(key);
    if (it == members_.end())
        return {key};
    return {it->second.begin(), it->second.end()};
}

std::vector<MemoryGroups::Merge> MemoryGroups::join(Tid a, Tid b)
{
    Tid ka = key_of(a), kb = key_of(b);
    if (ka == kb)
        return {};
    std::vector<Merge> merges;
    Tid into = kb < 0 ? kb : ka < 0 ? ka : next_key_--;
    for (Tid from : {ka, kb}) {
        if (from == into)
            continue;
        std::vector<Tid> moved = members(from);
        for (Tid p : moved) {
            group_[p] = into;
            members_[into].insert(p);
        }
        members_.erase(from);
        merges.push_back({from, into, std::move(moved)});
    }
    return merges;
}

std::vector<MemoryGroups::Merge> MemoryGroups::mapped_shared(Tid tgid, std::optional<FileIdentity> file)
{
    has_shared_.insert(tgid);
    std::vector<Merge> merges;
    if (!file)
        return merges; // anonymous: shared only with the children it will have
    auto& users = file_users_[*file];
    for (Tid other : users)
        for (const Merge& m : join(tgid, other))
            merges.push_back(m);
    users.insert(tgid);
    return merges;
}

std::vector<MemoryGroups::Merge> MemoryGroups::forked(Tid parent, Tid child, bool shares_vm)
{
    if (!shares_vm && !has_shared_.contains(parent))
        return {};
    has_shared_.insert(child);
    for (auto& [file, users] : file_users_)
        if (users.contains(parent))
            users.insert(child);
    return join(child, parent);
}

std::optional<Tid> MemoryGroups::leave(Tid tgid)
{
    has_shared_.erase(tgid);
    for (auto it = file_users_.begin(); it != file_users_.end();) {
        it->second.erase(tgid);
        it = it->second.empty() ? file_users_.erase(it) : std::next(it);
    }
    auto g = group_.find(tgid);
    if (g == group_.end())
        return std::nullopt;
    Tid key = g->second;
    group_.erase(g);
    // (A group of one stays one until its last process leaves: its key
    // stays the one it is scheduled under.)
    auto m = members_.find(key);
    m->second.erase(tgid);
    if (m->second.empty())
        members_.erase(m);
    return key;
}

} // namespace rw
