// `rewind record`: runs a program under the eBPF capture and the ptrace
// supervisor and writes its trace.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "env_scrub.h"
#include "trace_meta.h"
#include "usage_error.h"

namespace rw {

struct RecordOptions {
    std::optional<std::filesystem::path> output;
    std::vector<std::string> command;
    uint32_t ring_bytes = 64u << 20;
    int zstd_level = 1;
    std::chrono::milliseconds signal_fallback{10};
    std::chrono::milliseconds time_slice{50}; // a thread others wait for runs this long before preemption
    bool chaos = false;                       // pick the next thread at random (races show up more)
    bool parallel = false;                    // threads run freely; libc synchronization calls are ordered
    bool wait_all = false;                    // record until every process exits, not only the program
    std::function<void()> started;            // called once the program runs (it was found and exec'd)
    EnvScrub scrub_env;                       // kept in the trace as placeholders
};

struct RecordResult {
    std::filesystem::path trace;
    TraceEnd end;
};

RecordResult record(const RecordOptions& options);

// Checks the privileges and kernel features recording needs; throws UsageError.
void check_record_prerequisites();

} // namespace rw
