// A stopped copy of the whole replayed world: one forked copy of every
// replayed process, and the replayer's bookkeeping at that moment. Copies
// are made copy-on-write by fork, so a snapshot costs page tables, not
// memory, until the live processes write. Fork copies only the thread that
// calls it: the other threads of a process are kept as their registers and
// kernel state, and made again with clone when the snapshot is restored.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <vector>

#include "event.h"
#include "event_source.h"
#include "mapped_file_copies.h"
#include "shared_memory.h"
#include "mount_view.h"
#include "stdio_fds.h"
#include "sync_call_state.h"
#include "task.h"
#include "thread_state.h"

namespace rw::replay {

class StopWaiter;

struct ReplaySnapshot {
    struct TaskCopy {
        Tid recorded_tid = 0;
        pid_t pid = 0; // the stopped copy of its process, if it made it (its process's first task)
        Registers regs;
        ThreadState state; // for a thread made again
        size_t group = 0;  // index into groups
        size_t vm = 0;     // index into vms
        uint64_t last_syscall_seq = 0;
        Tid vfork_child = 0;
        Resume last_resume = Resume::Cont;
        uint64_t child_settid = 0;
        Tid child_settid_value = 0;
        uint64_t clear_child_tid = 0;
        bool alt_stack = false;
        bool asleep = false;             // in a synchronization call's futex wait, made again on restore
        std::optional<StdioFds> own_fds; // a descriptor table of its own (Task::own_fds)
    };
    struct GroupCopy {
        Tid recorded_tgid = 0;
        StdioFds fds;
    };
    struct VmCopy {
        int id = 0;
        uint64_t syscall_insn = 0;
        bool keeps_from_forks = false;
    };

    ReplaySnapshot(StopWaiter& waiter) : waiter(waiter) {}
    ~ReplaySnapshot();
    ReplaySnapshot(const ReplaySnapshot&) = delete;
    ReplaySnapshot& operator=(const ReplaySnapshot&) = delete;

    StopWaiter& waiter;
    std::vector<TaskCopy> tasks;
    std::vector<GroupCopy> groups;
    std::vector<VmCopy> vms;
    std::map<Tid, StopInfo> finished;
    std::map<Tid, SyncCallState> sync_calls;                     // parallel traces: threads inside a call
    std::map<Tid, std::pair<uint64_t, std::string>> last_events; // parallel traces: for reports
    EventSource::Checkpoint source;
    Tid initial_tid = 0;
    int next_vm_id = 0;
    bool warned_unechoed = false;
    std::vector<MountedFile> mounts; // the trace files mounted in the replay's namespace so far
    // The copies came back through CRIU, which keeps neither a thread's
    // rdtsc trap (PR_SET_TSC) nor the personality's ADDR_NO_RANDOMIZE:
    // restoring sets them again in each process.
    bool restored_by_criu = false;
    // The replay's copies of mapped files (mapped_file_copies.h), which the
    // copies' mappings share with the live processes.
    MappedFileCopies::Contents mapped_files;
    // The memory its processes share with each other (shared_memory.h).
    SharedMemory shared_memory;
    std::map<int64_t, int> sysv_ids; // SysvSegments::ids()

    uint64_t next_event() const { return source.cursor; }
};

} // namespace rw::replay
