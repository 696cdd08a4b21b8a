// The start image of a recording made by attaching to a running process
// (rewind record --pid): a persistent landmark at event 0 in TRACE/start/,
// the state every replay of the trace starts from instead of an execve.
//
// The recorder injects a fork into the process while every thread is
// stopped; the copy drops its descriptors (the live process keeps its
// sockets, pipes and terminal: the replay emulates them from the events)
// and its shared memory becomes private, and CRIU dumps it. The threads'
// registers and kernel state are read from the live threads, so the
// landmark describes the whole process, as one made in a replay does: the
// other threads are made again by clone when it is restored.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "event.h"
#include "landmark_manifest.h"
#include "landmarks.h"

namespace rw::replay {

struct StartThread {
    pid_t tid = 0;
    Registers regs;
    uint64_t clear_child_tid = 0;
};

struct StartProcess {
    pid_t tgid = 0;
    std::vector<StartThread> threads; // ptrace-stopped outside any syscall, the leader first
    uint64_t syscall_insn = 0;        // a syscall instruction of the process
};

// Writable memory the processes shared (their copies have it private):
// `length` bytes at each (process, address), made one again at restore.
struct StartSharedMemory {
    uint64_t length = 0;
    bool writable = true;
    std::vector<std::pair<pid_t, uint64_t>> mapped_at;
};

class StartImageWriter {
public:
    // Describes the processes (the attached one first, parents before
    // children) as the start image has them. Throws std::runtime_error.
    void describe(const std::vector<StartProcess>& processes, const std::vector<StartSharedMemory>& shared);
    // Saves the parked fork copies (Attachment::park_copy), one per process
    // in the order described, into a partial image beside `trace`/`dir`;
    // the processes themselves may run meanwhile. Throws std::runtime_error.
    void dump(const std::filesystem::path& trace, const std::string& dir, const std::vector<pid_t>& copies);
    // Completes it once the recording has `events` events; `mappings`:
    // the processes' mappings at the attach, with the trace copies of
    // their files (mounted for the restore).
    void finish(const std::filesystem::path& trace, const std::string& dir, uint64_t events,
                const std::vector<Mapping>& mappings);

private:
    LandmarkManifest manifest_;
    size_t processes_ = 0;
    bool described_ = false;
    bool taken_ = false;
};

// The start image of an attached trace, as a landmark entry (with the
// problem that makes it unusable, if any).
LandmarkEntry start_image_entry(const Trace& trace);

// Makes the memory a start image's processes shared (the manifest's
// state, "shared_memory") shared again between the restored `copies`.
// Throws std::runtime_error.
void share_again(const nlohmann::json& state, const std::vector<pid_t>& copies);

// For a trace recorded by attaching to a process: restores its start image
// (kept by `set`) into `replayer`, as the beginning of `timeline`, and
// returns true. Throws ReplayError (refused) saying why it cannot. Other
// traces: false, nothing done.
bool start_from_image(LandmarkSet& set, Timeline& timeline, Replayer& replayer);

} // namespace rw::replay
