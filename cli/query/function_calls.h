// rewind calls: every call of a function in the recording, with its
// arguments and what it returned, from two replays that stop only at the
// function's entry and at the instructions its calls return to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "query_gdb.h"

namespace rw::cli {

struct CallRecord {
    std::string position;       // after the function's prologue, where gdb shows the arguments
    std::string entry_position; // at its first instruction
    int64_t thread = 0;
    uint64_t return_address = 0;
    CodePlace caller;              // where the call is
    std::vector<std::string> args; // one per parameter; without debug information, the six argument registers
    bool returned = false;         // false: it never returned (longjmp, exit, the end of the recording)
    std::string value;             // what it returned ("" for void)
    std::string returned_at;       // the position after its return
};

struct CallList {
    FunctionInfo function;
    std::string object; // the program or library the function is in
    std::vector<CallRecord> calls;
    bool complete = true; // false: more calls than `most`
    uint64_t most = 0;
    std::vector<std::string> notes;
};

CallList list_calls(GdbMi& gdb, const FunctionInfo& function, uint64_t most);

} // namespace rw::cli
