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

class StartImageWriter {
public:
    // Describes the threads of process `tgid` (ptrace-stopped outside any
    // syscall, the leader first) as the start image has them; `syscall_insn`:
    // a syscall instruction of the process. Throws std::runtime_error.
    void describe(pid_t tgid, const std::vector<StartThread>& threads, uint64_t syscall_insn);
    // Saves the parked fork copy `copy` (Attachment::park_copy) into a
    // partial image beside `trace`/`dir`; the process itself may run
    // meanwhile. Throws std::runtime_error.
    void dump(const std::filesystem::path& trace, const std::string& dir, pid_t copy);
    // Completes it once the recording has `events` events; `mappings`:
    // the process's mappings at the attach, with the trace copies of
    // their files (mounted for the restore).
    void finish(const std::filesystem::path& trace, const std::string& dir, uint64_t events,
                const std::vector<Mapping>& mappings);

private:
    LandmarkManifest manifest_;
    bool described_ = false;
    bool taken_ = false;
};

// The start image of an attached trace, as a landmark entry (with the
// problem that makes it unusable, if any).
LandmarkEntry start_image_entry(const Trace& trace);

// For a trace recorded by attaching to a process: restores its start image
// (kept by `set`) into `replayer`, as the beginning of `timeline`, and
// returns true. Throws ReplayError (refused) saying why it cannot. Other
// traces: false, nothing done.
bool start_from_image(LandmarkSet& set, Timeline& timeline, Replayer& replayer);

} // namespace rw::replay
