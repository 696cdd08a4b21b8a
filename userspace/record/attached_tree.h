// rewind record --pid PID --tree: a running process and every process
// descended from it, attached together. Each process is an Attachment of
// its own (its threads seized and stopped, its guardian); the tree is
// complete when no process of it has a child that is not attached, which
// holds once all are stopped (a stopped process forks nothing). The start
// image has a copy of each, taken while all are stopped, so that the
// processes' memory is of one moment.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attach.h"
#include "process_image.h"
#include "trace_meta.h"

namespace rw {

// Writable memory that processes of the tree share with each other (the
// same part of one shared object, mapped by each at its own address): the
// start image's copies are made private, so the replay shares it again.
struct SharedRegion {
    uint64_t dev = 0;
    uint64_t ino = 0;
    uint64_t offset = 0;
    uint64_t length = 0;
    std::string perms;
    std::string path;
    std::vector<std::pair<pid_t, uint64_t>> mapped_at; // (process, address), at least two processes
};

// The running children of `pid` (of any of its threads), and theirs.
std::vector<pid_t> descendants_of(pid_t pid);
// Whether process `pid` is gone or on its way out (a zombie, or exiting):
// not one to attach to, nor a reason to refuse the others.
bool ending(pid_t pid);

class AttachedTree {
public:
    // Attaches to `root` and, with `descendants`, to every process below it.
    // Throws UsageError (exit status 1) saying why it cannot; everything
    // attached so far is let go as it was.
    AttachedTree(pid_t root, bool descendants, long ptrace_options);
    ~AttachedTree(); // (children let go before their parents)
    AttachedTree(const AttachedTree&) = delete;
    AttachedTree& operator=(const AttachedTree&) = delete;

    Attachment& root() { return *processes_.front(); }
    // The root first, every parent before its children.
    const std::vector<std::unique_ptr<Attachment>>& processes() const { return processes_; }
    pid_t parent_of(pid_t pid) const { return parents_.at(pid); }

    // Attachment::prepare in each process.
    void prepare();
    // Each process's copy for the start image (Attachment::fork_copy),
    // parked; all or none. Throws std::runtime_error.
    std::vector<pid_t> park_copies(const std::vector<ImagePoint>& at);
    void discard_copies(const std::vector<pid_t>& copies);
    std::vector<ImagePoint> image_points() const;
    // What the processes share (see SharedRegion). Throws std::runtime_error
    // for sharing the replay cannot make again (one object mapped in parts
    // that overlap differently).
    std::vector<SharedRegion> shared_regions() const;
    // Every shared writable object each process maps, as the recording's
    // memory groups know it (a System V segment by its id).
    std::vector<std::pair<pid_t, FileIdentity>> shared_objects() const;

    void rseq_registered(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig);
    // Attachment::undo of each thread by the process it belongs to (or
    // descends from, for processes forked while recorded).
    std::vector<std::string> undo(const std::vector<pid_t>& tids);
    AttachGuardian& guardian_of(pid_t tgid);
    // (tgid, tid, signal) that reached threads while they were held.
    std::vector<std::tuple<pid_t, pid_t, int>> held_signals() const;
    void release();
    std::chrono::duration<double> paused() const { return processes_.front()->paused(); }

private:
    Attachment& owner_of(pid_t tgid);

    std::vector<std::unique_ptr<Attachment>> processes_;
    std::map<pid_t, pid_t> parents_;
};

} // namespace rw
