#include "shared_memory.h"

#include <fstream>
#include <sstream>
#include <string>

#include "tracee.h"

namespace rw::replay {

namespace {

struct SharedRegion {
    uint64_t start = 0, end = 0;
    uint64_t offset = 0; // in the shared object
    uint64_t inode = 0;
};

// The shared mappings of `pid` that the kernel's shared memory backs
// (shmem: "/dev/zero (deleted)" for MAP_SHARED anonymous memory,
// "/SYSV…" for SysV segments), readable ones only.
std::vector<SharedRegion> shared_regions(pid_t pid)
{
    std::vector<SharedRegion> out;
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string range, perms, offset, dev, inode, path;
        ls >> range >> perms >> offset >> dev >> inode;
        std::getline(ls, path);
        if (perms.size() < 4 || perms[0] != 'r' || perms[3] != 's')
            continue;
        bool shmem = path.find("/dev/zero (deleted)") != std::string::npos || path.find("/SYSV") != std::string::npos;
        if (!shmem)
            continue;
        auto dash = range.find('-');
        SharedRegion r;
        r.start = std::stoull(range.substr(0, dash), nullptr, 16);
        r.end = std::stoull(range.substr(dash + 1), nullptr, 16);
        r.offset = std::stoull(offset, nullptr, 16);
        r.inode = std::stoull(inode);
        out.push_back(r);
    }
    return out;
}

} // namespace

SharedMemory SharedMemory::save(const std::vector<pid_t>& processes)
{
    SharedMemory saved;
    for (pid_t pid : processes) {
        TraceeMemory mem(pid);
        for (const SharedRegion& r : shared_regions(pid)) {
            auto key = std::make_pair(r.inode, r.offset);
            if (saved.regions_.contains(key))
                continue;
            std::vector<uint8_t> bytes(r.end - r.start);
            bytes.resize(mem.read_partial(RemoteAddr(r.start), bytes));
            saved.regions_.emplace(key, std::move(bytes));
        }
    }
    return saved;
}

void SharedMemory::restore(const std::vector<pid_t>& processes) const
{
    if (regions_.empty())
        return;
    for (pid_t pid : processes) {
        TraceeMemory mem(pid);
        for (const SharedRegion& r : shared_regions(pid)) {
            auto it = regions_.find({r.inode, r.offset});
            if (it == regions_.end())
                continue;
            size_t n = std::min<size_t>(it->second.size(), r.end - r.start);
            mem.write(RemoteAddr(r.start), {it->second.data(), n});
        }
    }
}

uint64_t SharedMemory::bytes() const
{
    uint64_t n = 0;
    for (const auto& [key, bytes] : regions_)
        n += bytes.size();
    return n;
}

} // namespace rw::replay
