// Which recorded processes share memory. Processes that share writable
// memory and write it in their own code (a lock, a counter, a queue in a
// shared page) interleave their accesses in ways no trace of syscalls
// shows, exactly as threads of one process do: the recorder runs them as
// one scheduling group, one thread of the whole group at a time, so the
// stream's order is the order they ran in, and replay reproduces it.
//
// Two processes share memory when one inherited a shared mapping from the
// other at fork (MAP_SHARED anonymous memory, a shared file mapping), when
// both map one file MAP_SHARED, or when a fork shares the whole address
// space (CLONE_VM without CLONE_VFORK).
//
// Each process is scheduled under a key: its own id, or its group's, a
// negative number that never names a process. This class is only the
// bookkeeping: the supervisor schedules (supervisor_groups.cpp).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "event.h"
#include "trace_meta.h"

namespace rw {

class MemoryGroups {
public:
    // The key a process is scheduled under.
    Tid key_of(Tid tgid) const;
    // The processes scheduled under a key.
    std::vector<Tid> members(Tid key) const;
    // Whether the process has shared mappings that a fork would pass on.
    bool shares_memory(Tid tgid) const { return has_shared_.contains(tgid); }

    // Processes scheduled under `from` (`processes`) are now scheduled
    // under `into`.
    struct Merge {
        Tid from;
        Tid into;
        std::vector<Tid> processes;
    };
    // `tgid` made a MAP_SHARED mapping, of `file` if it maps one: it joins
    // every process that maps that file shared.
    std::vector<Merge> mapped_shared(Tid tgid, std::optional<FileIdentity> file);
    // `child` was forked from `parent`: it joins the parent's group if it
    // inherits shared mappings, or shares the parent's whole memory
    // (`shares_vm`). A vfork child is never passed here: its parent waits
    // for its exec or exit, in which nothing runs beside it.
    std::vector<Merge> forked(Tid parent, Tid child, bool shares_vm);
    // The process exec'd (its memory is new) or is gone: it leaves its
    // group. Returns the key it was scheduled under if that was a group's.
    std::optional<Tid> leave(Tid tgid);

private:
    std::vector<Merge> join(Tid a, Tid b);

    std::map<Tid, Tid> group_;             // a process in a group -> the group's key
    std::map<Tid, std::set<Tid>> members_; // a group's key -> its processes
    std::set<Tid> has_shared_;             // processes with shared mappings
    std::map<FileIdentity, std::set<Tid>> file_users_;
    Tid next_key_ = -1;
};

} // namespace rw
