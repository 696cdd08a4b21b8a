// What `rewind info` reports, computed from the event stream itself (so it
// holds for traces whose recorder never wrote end.json).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "event.h"
#include "event_stream.h"

namespace rw {

class Trace;

struct TraceSummary {
    uint64_t events = 0;
    std::map<std::string, uint64_t> by_kind;  // syscall, signal, …
    std::map<std::string, uint64_t> syscalls; // per syscall name
    struct Unknown {
        std::string what;
        uint64_t count = 0;
        uint64_t first_event = 0;
        std::optional<uint64_t> first_success; // a call that succeeded: replay stops there
    };
    std::map<std::string, Unknown> unknown; // effects unknown, by description
    std::set<Tid> threads;
    std::set<Tid> processes;
    uint64_t memory_bytes = 0;
    uint64_t rebuilt = 0;                                         // events the supervisor finished after a stall
    std::vector<std::pair<uint64_t, std::string>> incomplete;     // event index, why
    std::optional<std::pair<uint64_t, std::string>> replay_stops; // the first event replay cannot pass, why
    StreamEnd stream_end;
    uint64_t stream_bytes = 0;
    uint64_t file_copies = 0;
    struct CopyUse {
        std::string path; // the file it is a copy of, as the program named it
        uint64_t first_event = 0;
    };
    std::map<std::string, CopyUse> copies_named; // content hashes the events name (mapped files)
    uint64_t file_bytes = 0;
};

TraceSummary summarize(const Trace& trace);

// A call's name with its subcommand's: "semctl(GETALL)", "ioctl(0x1234)"
// for an unknown one, "syscall_333" for an unknown syscall.
std::string describe_unknown(const SyscallEvent& e);

} // namespace rw
