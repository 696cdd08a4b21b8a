// The kernel side of recording: the capture program's lifecycle (open,
// configure, load, upload the syscall table, attach, destroy) and its ring.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "rewind_abi.h"

namespace rw {

struct CaptureError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class BpfCapture {
public:
    struct Options {
        uint32_t ring_bytes = 64u << 20; // a power of two, >= page size
        uint32_t wakeup_bytes = 1u << 20;
        // Synchronization probes will be attached (rewind record --parallel):
        // a process that closes their links is started at once.
        bool sync_probes = false;
    };
    using RecordHandler = std::function<void(std::span<const uint8_t>)>;

    // Throws CaptureError with a message a user can act on.
    BpfCapture(const Options& options, RecordHandler handler);
    ~BpfCapture();
    BpfCapture(const BpfCapture&) = delete;
    BpfCapture& operator=(const BpfCapture&) = delete;

    // Starts following `pid` (and everything it forks) at its next execve.
    void track_launcher(pid_t pid);
    // A thread of a running process recorded from now on (rewind record
    // --pid): its events are captured from its next syscall.
    void track_running(pid_t tid);
    // No event of the thread is captured any more, and it is never stalled
    // (a detach); false if it was not tracked.
    bool untrack(pid_t tid);
    // The thread's next restart_syscall continues call `nr` (it was in it
    // when rewind attached): its outputs are captured as that call's.
    void note_restarted_call(pid_t tid, int nr);
    // Runs `fn` (syscalls the supervisor injects into the thread) with the
    // thread out of the capture, its state kept.
    void unrecorded(pid_t tid, const std::function<void()>& fn);
    // The same with all of `tids` out of the capture.
    void unrecorded(std::span<const pid_t> tids, const std::function<void()>& fn);

    int ring_fd() const;
    // Hands every committed ring record to the handler; returns how many.
    size_t drain();

    // Whether the kernel side left a stall for this thread.
    bool has_stall(pid_t tid);
    // A stall the kernel side left for this thread, removed from the map.
    std::optional<rw_stall> take_stall(pid_t tid);
    // Whether a stall waiting for the supervisor is the syscall of this seq.
    bool is_stalled_seq(uint64_t seq);
    // Tells the kernel side a file's content is in the trace (no more stalls for it).
    void mark_file_known(const rw_file_identity& identity);
    // Registers a file whose copy reads may refer to (RW_COPY_PENDING):
    // the recorder's next open of it counts its writers, and any open for
    // writing from now on deletes the entry. False if there is no room.
    bool register_read_copy(const rw_file_identity& identity);
    // The kernel side's entry for that file, if it still has one.
    std::optional<rw_read_copy> read_copy(const rw_file_identity& identity);
    // Reads of the registered file (while it keeps this identity) are
    // recorded by reference to the trace's copy; false if the entry is
    // gone (someone opened the file for writing meanwhile).
    bool share_read_copy(const rw_file_identity& identity);
    // Reads of it are recorded by content again.
    void withdraw_read_copy(const rw_file_identity& identity);
    // Shared copies the kernel side withdrew because of an open for writing.
    uint64_t read_copies_retired() const;

    // The supervisor answers thread `tid`'s current call itself: it stops
    // at the call's return (RW_STALL_VIEW) whatever the call returned.
    // The thread's blocked signals after its last call that changed them
    // (RW_VIEW_SIGNAL_MASK), if the kernel side saw one.
    std::optional<uint64_t> signal_mask(pid_t tid) const;
    void answer_at_exit(pid_t tid);

    // The threads of process `tgid` run one at a time (or no longer do):
    // the kernel side then emits RW_REC_YIELD at the entry of every call
    // that may block (with `every_call`, for --chaos, whose point is to
    // hand the CPU over often, also at every read and write), and
    // stops the thread when that call returns.
    void set_serialized(pid_t tgid, bool serialized, bool every_call = false);

    // Attaches the synchronization probes (rewind record --parallel) to the
    // libc at `path` (any path the kernel can open, such as /proc/self/fd/N)
    // for process `pid` only (a probe for every process would be put into
    // every process on the machine that maps this libc, which costs seconds);
    // `name` is the library's own path. Again for the same process and
    // library: nothing.
    void attach_sync_probes(pid_t pid, const std::string& path, const std::string& name);
    // A new process (fork) gets the probes of its parent's libraries.
    void inherit_sync_probes(pid_t parent, pid_t child);
    // The process is gone: its probes are detached (in the background) and
    // a later process with its pid gets probes of its own.
    void release_sync_probes(pid_t pid);
    size_t sync_probes() const;
    // Calls the kernel would not probe (their first instruction).
    std::vector<std::string> unprobed_sync_calls() const;

    // Draws the next number from the global event counter.
    uint64_t next_seq();

    // Records the kernel could not take, or program runs it skipped; both
    // must stay zero for a complete trace.
    uint64_t ring_refusals() const;
    uint64_t missed_runs() const;

    uint32_t ring_bytes() const { return options_.ring_bytes; }
    // CONFIG_HZ of the running kernel (known once the program has exec'd), or 0.
    uint32_t kernel_hz() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    Options options_;
};

} // namespace rw
