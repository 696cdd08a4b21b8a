// Where the code a program maps holds rdrand/rdseed (random_insn.h), and the
// int3s the recorder keeps on them in each process. A file is scanned once
// per content; its sites are planted in every executable mapping of it, at
// exec or while the thread that mapped it is stalled after its mmap.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "random_insn.h"

namespace rw {

// File offsets of the rdrand/rdseed instructions in the executable segments
// of the ELF file open at `fd` (none for other files). A byte pattern counts
// only where decoding from the start of its function (.eh_frame) or, without
// one, of its segment lands on it.
std::vector<uint64_t> find_random_sites(int fd);

class RandomSites {
public:
    // Whether the file open at `fd` (content `hash`) has sites; scans once.
    bool scan(int fd, const std::string& hash);

    // Plants the sites of the file with content `hash` in the executable
    // mappings of `path` in process `tgid`, stopped in `tid`. Returns a
    // problem, empty if none.
    std::string plant(pid_t tid, pid_t tgid, const std::string& hash, const std::string& path);

    // The instruction our int3 at `addr` stands for in process `tgid` (a
    // fork child has its parent's int3s until it execs).
    std::optional<RandomInstruction> at(pid_t tgid, uint64_t addr);

    // Takes the int3s out of process `tgid` again (a detach), through
    // stopped thread `tid`; false if one could not be.
    bool unplant(pid_t tgid, pid_t tid);
    // Writes the bytes our int3s replaced into `copy`, a fork of process
    // `tgid` (a start image's), whose int3s stay; false if one could not be.
    bool unplant_in_copy(pid_t tgid, pid_t copy) const;

    // The process has a new image (exec) or is gone.
    void forget(pid_t tgid, bool execed);

    uint64_t planted() const { return planted_count_; }
    // Told of every int3 planted: (process, address, the byte it replaced).
    void on_plant(std::function<void(pid_t, uint64_t, uint8_t)> hook) { on_plant_ = std::move(hook); }

private:
    // Writes the bytes under process `tgid`'s int3s into `into` (it, or a copy).
    bool write_replaced(pid_t tgid, pid_t into) const;

    std::map<std::string, std::vector<uint64_t>> by_content_;
    std::map<pid_t, std::map<uint64_t, RandomInstruction>> by_process_; // int3 address → instruction
    std::map<pid_t, std::map<uint64_t, uint8_t>> replaced_;             // int3 address → the byte it replaced
    uint64_t planted_count_ = 0;
    std::function<void(pid_t, uint64_t, uint8_t)> on_plant_;
};

} // namespace rw
