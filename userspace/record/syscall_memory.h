// The user memory of one syscall, found with the same walker the kernel side
// runs (bpf/buffer_walk.h), for when the supervisor must capture it itself.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "event.h"
#include "rewind_abi.h"

namespace rw {

class TraceeMemory;

struct Segment {
    uint64_t addr = 0;
    uint64_t len = 0;
    uint8_t buffer = 0;
    Direction dir = Direction::Out;
    bool is_string = false; // len is a maximum; the bytes end at the NUL
};

// Reads `size` bytes at `addr` into `dst`; false if unreadable.
using UserReader = std::function<bool(uint64_t addr, void* dst, size_t size)>;

struct WalkResult {
    std::vector<Segment> segments;
    enum class Status { Ok, TooComplex, Fault } status = Status::Ok;
};

WalkResult walk_buffers(const rw_sys_spec& spec, const uint64_t (&args)[RW_MAX_ARGS], int64_t ret,
                        const UserReader& read);

// Captures the memory of a syscall from a stopped tracee. Unreadable pieces
// are kept as ranges flagged `unreadable`; `problem` explains a walk failure.
std::vector<MemoryRange> capture_syscall_memory(const TraceeMemory& mem, int nr, const uint64_t (&args)[RW_MAX_ARGS],
                                                int64_t ret, std::string& problem);

// Input data above this size is kept only as a hash, except for the
// descriptors below kKeepInputFdLimit (stdin/stdout/stderr): replay checks
// the hash and re-emits what the program wrote to its standard streams.
inline constexpr uint64_t kKeepInputBytes = 4096;
inline constexpr int kKeepInputFdLimit = 3;

// Merges adjacent pieces, computes hashes, applies the input-data policy.
void finalize_memory(SyscallEvent& event);

} // namespace rw
