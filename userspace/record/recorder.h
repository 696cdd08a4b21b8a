// `rewind record`: runs a program under the eBPF capture and the ptrace
// supervisor and writes its trace.
#pragma once

#include <chrono>
#include <csignal>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "env_scrub.h"
#include "event.h"
#include "trace_meta.h"
#include "usage_error.h"

namespace rw {

struct ImagePoint;
struct SharedRegion;

// The start image of a process rewind attaches to: what the replay starts
// from. Made by the replay's side (replay/landmarks/start_image.h), which
// the recorder does not link.
struct StartImageMaker {
    // Describes the threads of the attached processes (the first one's
    // first, parents before children), all stopped, as the start image has
    // them, and the memory they share. Throws std::runtime_error.
    std::function<void(const std::vector<ImagePoint>&, const std::vector<SharedRegion>&)> describe;
    // Saves the parked fork copies of the processes (Attachment::park_copy),
    // in the same order, into `trace`/`dir`, while the processes run on.
    // Throws std::runtime_error.
    std::function<void(const std::filesystem::path& trace, const std::string& dir, const std::vector<pid_t>& copies)>
        dump;
    // Completes it once the recording's events are counted; `mappings`:
    // the processes' mappings at the attach, with their files' trace copies.
    std::function<void(const std::filesystem::path& trace, const std::string& dir, uint64_t events,
                       const std::vector<Mapping>& mappings)>
        finish;
};

// The flight recorder's window (record --window): how much of the end of
// the recording to keep, as a span of time or a size on disk.
struct RecordWindow {
    std::string text; // as given
    std::optional<std::chrono::milliseconds> span;
    std::optional<uint64_t> bytes;
    // This signal to rewind record writes the window so far out as a trace
    // of its own (TRACE.1, TRACE.2, …) and the recording goes on.
    int freeze_signal = SIGUSR1;
};

struct RecordOptions {
    std::optional<std::filesystem::path> output;
    std::vector<std::string> command;
    uint32_t ring_bytes = 64u << 20;
    int zstd_level = 1;
    std::chrono::milliseconds signal_fallback{10};
    std::chrono::milliseconds time_slice{50};              // a thread others wait for runs this long before preemption
    bool chaos = false;                                    // pick the next thread at random (races show up more)
    bool parallel = false;                                 // threads run freely; libc synchronization calls are ordered
    bool wait_all = false;                                 // record until every process exits, not only the program
    std::function<void()> started;                         // called once the program runs (it was found and exec'd)
    EnvScrub scrub_env;                                    // kept in the trace as placeholders
    pid_t attach_pid = 0;                                  // record this running process instead (rewind record --pid)
    bool attach_tree = false;                              // … and every process below it (--tree)
    // Then detach after this long (--for, --detach-after): the processes run on unrecorded.
    std::optional<std::chrono::milliseconds> detach_after;
    std::function<StartImageMaker()> start_images; // for attach_pid: a maker per image
    std::optional<RecordWindow> window;            // with attach_pid: a flight recorder
};

struct RecordResult {
    std::filesystem::path trace;
    TraceEnd end;
    // The program rewind started and detached from (--detach-after), which
    // runs on: rewind's child, for wait_for_program.
    pid_t runs_on = 0;
};

RecordResult record(const RecordOptions& options);

// Checks the privileges and kernel features recording needs; throws UsageError.
void check_record_prerequisites();

} // namespace rw
