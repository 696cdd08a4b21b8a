// What a trace says about itself: meta.json (written when recording starts)
// and end.json (written when it ends; absent if the recorder was killed).
#pragma once

#include <compare>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "event.h"
#include "signal_state.h"

namespace rw {

struct TraceMeta {
    uint32_t format_version = 0;
    std::string rewind_version;
    std::string created; // ISO 8601, UTC
    uint64_t created_unix_ns = 0;
    std::string program; // resolved path of the recorded program
    std::vector<std::string> argv;
    std::vector<std::string> envp;
    std::string cwd;
    uint32_t uid = 0, gid = 0, euid = 0, egid = 0;
    std::string hostname;
    std::string kernel_release;
    std::string kernel_version;
    std::string cpu_vendor;
    std::string cpu_model;
    int cpu_family = 0, cpu_model_id = 0, cpu_stepping = 0;
    std::vector<std::string> cpu_flags;
    std::string clock_kind;   // "software" or "pmu"
    std::string clock_detail; // what the clock uses on this machine
    uint64_t ring_bytes = 0;
    std::vector<std::string> notes; // how the recording departs from a plain run
    // The program's resource limits: RLIMIT_STACK, for one, decides where the
    // kernel places the interpreter and mappings.
    struct Rlimit {
        int resource = 0;
        uint64_t cur = 0, max = 0;
    };
    std::vector<Rlimit> rlimits;
    // Blocked and ignored signals at the program's start (older traces: none).
    SignalState signals;
    // Environment variables recorded as placeholders (record --scrub-env).
    std::vector<std::string> scrubbed_env;
    // How the threads of a process ran: "serialized" (one at a time, the
    // order is the stream's) or "parallel" (freely; synchronization events
    // and syscalls are ordered by their seq). Older traces: serialized.
    std::string thread_mode = "serialized";
    // Recorded from a process that was already running (rewind record
    // --pid): the replay starts from the start image (trace-format.md,
    // start/) instead of an execve.
    struct Attached {
        // A process below it attached with it (--tree).
        struct Process {
            int pid = 0;
            int parent = 0;
            std::vector<std::string> argv; // its command line then
            std::string executable;
            std::vector<uint64_t> auxv;
            uint64_t threads = 0;
            std::vector<Mapping> mappings;
        };
        int pid = 0; // the process, and its leader thread
        std::string executable;
        std::vector<uint64_t> auxv; // as /proc/PID/auxv had it (gdb reads it)
        uint64_t threads = 0;
        double pause_seconds = 0;      // how long the process(es) were stopped while rewind attached
        std::string start_image;       // the start image's directory in the trace
        std::vector<Mapping> mappings; // its mappings then (files: their trace copies)
        std::vector<Process> descendants; // parents before their children
    };
    std::optional<Attached> attached;
};

std::vector<TraceMeta::Rlimit> current_rlimits();

struct ExitStatus {
    bool signaled = false;
    int code = 0;   // exit code, when !signaled
    int signal = 0; // terminating signal, when signaled
    bool core_dumped = false;
    int wait_status = 0;
    static ExitStatus from_wait_status(int status);
    std::string describe() const;
    int shell_status() const { return signaled ? 128 + signal : code; }
};

// TraceEnd::kernel_hz of recordings whose syscall exit times are their
// thread's running time (from 1 when the thread starts; units of 250 us).
// Older recordings carry the kernel's jiffies there, a wall clock.
inline constexpr uint32_t kThreadTimeHz = 4000;

// A file as the kernel knows it: device (as stat() gives it) and inode.
struct FileIdentity {
    uint64_t dev = 0;
    uint64_t ino = 0;
    auto operator<=>(const FileIdentity&) const = default;
};

// The recorder stopped the program where it did something rewind cannot
// record (it set out to trace a process: rewind record refuses it). The
// events end with a note of why, at `event`; the recorded processes were
// killed there, and their deaths are not in the trace.
struct RecordRefusal {
    uint64_t event = 0; // index of the note that ends the events
    int32_t tid = 0;    // the thread that made the call
    std::string why;
};

struct TraceEnd {
    std::string ended; // ISO 8601, UTC
    uint64_t duration_ns = 0;
    ExitStatus exit;
    bool complete = true;
    std::vector<std::string> problems; // why the trace is incomplete
    uint64_t events = 0;
    uint64_t memory_bytes = 0;
    uint64_t stream_bytes = 0;
    uint64_t stalls = 0;    // events the supervisor had to finish
    uint32_t kernel_hz = 0; // units per second of syscall exit times (kThreadTimeHz; older traces: jiffies; 0: unknown)
    uint64_t processes = 0;
    uint64_t threads = 0;
    std::map<std::string, uint64_t> syscall_counts;
    // The disk filled while recording: the events kept end here, and the
    // program was stopped (the policy rewind record documents).
    std::optional<uint64_t> disk_full_at;
    std::optional<RecordRefusal> refusal;
    // Processes the program left running when it exited, which the
    // recorder killed (rewind record without --wait): their ends are
    // recorded as deaths by SIGKILL.
    uint64_t killed_at_exit = 0;
    // Files the program changed through a descriptor while they were
    // mapped (kSyscallMappedWrite): replay maps even their private
    // mappings from a copy of its own that it changes as the kernel did.
    std::vector<FileIdentity> files_written_while_mapped;
    // Files some process mapped shared and writable: replay maps their
    // read-only shared mappings from its own copy too, so that every
    // mapping sees the writes. Unknown in traces that predate it (and in
    // those without an end), where every shared mapping uses a copy.
    std::optional<std::vector<FileIdentity>> files_mapped_shared_writable;
    // The recording ended by detaching from the processes, which ran on
    // (rewind record --pid): the trace ends there, complete.
    bool detached = false;
    std::string detach_reason;
    // A flight recorder's trace (record --window): only the end of a longer
    // recording is kept, from its start image on.
    struct Window {
        std::string size;                              // as asked: "10m", "2GiB"
        uint64_t recorded_ns = 0;                      // how long the whole recording ran
        uint64_t events_dropped = 0;                   // before the kept start image
        uint64_t images_taken = 0;                     // start images, the attach's included
        std::map<std::string, uint64_t> images_missed; // why one could not be taken: how often
    };
    std::optional<Window> window;
};

void write_meta(const std::filesystem::path& trace_dir, const TraceMeta& meta);
TraceMeta read_meta(const std::filesystem::path& trace_dir);
void write_end(const std::filesystem::path& trace_dir, const TraceEnd& end);
std::optional<TraceEnd> read_end(const std::filesystem::path& trace_dir);

std::string iso_time_utc(uint64_t unix_ns);
uint64_t unix_time_ns();

} // namespace rw
