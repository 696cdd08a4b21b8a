// Memory that replayed processes share with each other and that no file of
// the replay's backs: MAP_SHARED anonymous memory (inherited across fork)
// and SysV shared memory. A snapshot's copies are forks, which share it
// with the live processes: whatever those write after the snapshot would
// be there when it is restored. So a snapshot keeps its content, and a
// restore puts it back through the restored processes' mappings.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace rw::replay {

class SharedMemory {
public:
    // The content of every such region of these processes, once per
    // shared object (an inode of the kernel's shared memory) and offset.
    static SharedMemory save(const std::vector<pid_t>& processes);
    // Writes it back through whichever of these processes map it.
    void restore(const std::vector<pid_t>& processes) const;
    bool empty() const { return regions_.empty(); }
    uint64_t bytes() const;

private:
    // (inode, offset in the object) -> bytes
    std::map<std::pair<uint64_t, uint64_t>, std::vector<uint8_t>> regions_;
};

} // namespace rw::replay
