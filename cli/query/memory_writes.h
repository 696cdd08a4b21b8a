// rewind writes: every write to some bytes in the recording, with the value
// before and after and the instruction (or the event: a syscall's result,
// a signal frame) that wrote them, from one replay with the bytes watched
// by debug registers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "query_gdb.h"

namespace rw::cli {

// What to watch: an lvalue gdb resolves where the recording ends, or
// ADDRESS with a size.
struct WatchedBytes {
    std::string expr; // as the user wrote it
    uint64_t address = 0;
    TypeInfo type;
};

// The debug-register pieces (1, 2, 4 or 8 bytes, each aligned on its size)
// that cover [address, address + size); throws if more than 4 are needed.
std::vector<std::pair<uint64_t, uint32_t>> watch_pieces(uint64_t address, uint64_t size);

struct WriteRecord {
    std::string position; // just after the write
    int64_t thread = 0;   // 0 for an event's write
    std::string by;       // "instruction" or "event"
    uint64_t event = 0;   // by an event: its index
    std::string old_value, new_value;
    std::vector<uint64_t> writers; // the instructions that may have written (one, where the code tells)
    CodePlace place;               // of the writer
};

struct WriteList {
    WatchedBytes watched;
    std::string initial; // the value at the start
    std::vector<WriteRecord> writes;
    bool complete = true;
    uint64_t most = 0;
};

WriteList list_writes(GdbMi& gdb, const WatchedBytes& watched, uint64_t most);

} // namespace rw::cli
