// rewind origin: where a value came from. From the last write to the bytes
// of an lvalue, hop by hop back through the program: a store to the
// register it stored, the register back to the instruction that set it
// (a load, a move, arithmetic, a function's return value), a load to the
// last write to the loaded bytes, a libc copy (memcpy, strcpy …) from its
// destination byte to its source byte, until a syscall's result, a constant
// in the code, the program's initial data, or an instruction the tracer
// does not follow (said so).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "query_gdb.h"

namespace rw::cli {

struct OriginHop {
    std::string kind;     // store, load, move, compute, return, copy, constant, event, start, unfollowed
    std::string position; // before the instruction (after the write, for an event)
    uint64_t pc = 0;
    CodePlace place;
    std::string instruction; // disassembled
    std::string what;        // what the hop did, in words
    std::string tracked;     // what is followed from here: "8 bytes at 0x…" or "%rax"
    int64_t thread = 0;      // that ran the instruction (0: an event's, named in `what`)
};

struct OriginChain {
    std::vector<OriginHop> hops; // the latest first
    bool complete = false;       // reached an origin (a syscall, a constant, the initial data)
    std::string ends;            // why the chain ends
};

struct OriginOptions {
    std::string at = "end"; // where the lvalue holds the value to explain
    size_t depth = 16;      // hops at most
    // What an event wrote at an address: the syscall, the file and the byte.
    std::function<std::string(uint64_t event, uint64_t addr)> describe_event;
};

OriginChain trace_origin(GdbMi& gdb, uint64_t address, uint64_t size, const OriginOptions& options);

} // namespace rw::cli
