// The user memory of one syscall, found with the same walker the kernel side
// runs (bpf/buffer_walk.h), for when the supervisor must capture it itself.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
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
// The size kernel state gives an output (enum rw_state, its key), or
// nothing where it cannot be read.
using StateReader = std::function<std::optional<uint64_t>(uint32_t state, uint64_t key)>;

struct WalkResult {
    std::vector<Segment> segments;
    // Unsized: an output's size depends on kernel state `state` could not read.
    enum class Status { Ok, TooComplex, Fault, Unsized } status = Status::Ok;
};

WalkResult walk_buffers(const rw_sys_spec& spec, const uint64_t (&args)[RW_MAX_ARGS], int64_t ret,
                        const UserReader& read, const StateReader& state = {});

struct CapturedMemory {
    std::vector<MemoryRange> memory;
    // An output's size depends on kernel state that could not be read: what
    // the call wrote is not all there (the event is flagged kSyscallUnsized).
    bool unsized = false;
    std::string problem; // why the walk failed, if it did
};

// Captures the memory of a syscall from a stopped tracee. Unreadable pieces
// are kept as ranges flagged `unreadable`.
CapturedMemory capture_syscall_memory(const TraceeMemory& mem, int nr, const uint64_t (&args)[RW_MAX_ARGS],
                                      int64_t ret);

// A write through a /proc/PID/mem file: the thread whose file it is (its
// process's memory is what it wrote), and where the write went.
struct ProcessMemoryWrite {
    Tid tid = 0;
    uint64_t at = 0;
};
std::optional<ProcessMemoryWrite> process_memory_written(const TraceeMemory& mem, int nr,
                                                         const uint64_t (&args)[RW_MAX_ARGS], int64_t ret);

// A write through /proc/PID/mem of the writer's own process: the bytes it
// put in the process's memory, as an output of the call at the address the
// file offset names (what the kernel side records, for a call it left to
// the supervisor).
MemoryRange own_memory_written(const TraceeMemory& mem, const ProcessMemoryWrite& written, int nr,
                               const uint64_t (&args)[RW_MAX_ARGS], int64_t ret);

// Input data above this size is kept only as a hash, except for the
// descriptors below kKeepInputFdLimit (stdin/stdout/stderr): replay checks
// the hash and re-emits what the program wrote to its standard streams.
inline constexpr uint64_t kKeepInputBytes = 4096;
inline constexpr int kKeepInputFdLimit = 3;

// Merges adjacent pieces, computes hashes, applies the input-data policy.
void finalize_memory(SyscallEvent& event);

} // namespace rw
