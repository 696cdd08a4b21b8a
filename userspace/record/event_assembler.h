// Turns the kernel side's ring records into complete events: a syscall's
// data records are collected per thread until the syscall record closes them.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "event.h"
#include "event_orderer.h"
#include "rewind_abi.h"

namespace rw {

// Finds (or makes) the trace's copy of a file a thread just mapped.
class MappedFileResolver {
public:
    virtual ~MappedFileResolver() = default;
    virtual FileRef resolve(Tid tid, int fd, const rw_file_identity& identity) = 0;
};

// Reads of files recorded by reference (read_copies.h).
class ReadFileResolver {
public:
    virtual ~ReadFileResolver() = default;
    // A read by content from a file that could be referred to.
    virtual void on_read_by_content(Tid tid, Tid tgid, int fd, const rw_file_identity& identity, uint64_t bytes) = 0;
    // Process `tgid` opened `path` (relative to its working directory
    // unless absolute) as descriptor `fd`.
    virtual void on_open(Tid tgid, int fd, const std::string& path) = 0;
    // The copy a read by reference names.
    virtual std::string copy_of(const rw_file_identity& identity, uint64_t bytes) = 0;
};

class EventAssembler {
public:
    EventAssembler(EventOrderer& sink, MappedFileResolver& files, ReadFileResolver& reads)
        : sink_(sink), files_(files), reads_(reads)
    {}

    void on_record(std::span<const uint8_t> record);

    // The kernel side handed this thread's current syscall to the supervisor:
    // the data it emitted for it so far is dropped.
    void discard_partial(Tid tid);

    // Emits a syscall from a kernel-side record and its memory.
    // `file`, `file_offset`: the event's own (kSyscallWroteProcess).
    void emit_syscall(const rw_rec_syscall& rec, std::vector<MemoryRange> memory, uint32_t extra_flags = 0,
                      std::optional<FileRef> file = std::nullopt, uint64_t file_offset = 0);

    // The thread entered syscall `nr`. With `place`, its event goes to that
    // place in the stream (the thread gave up the CPU there); without, it
    // keeps the seq the kernel side gives it. Every record the kernel side
    // made before this entry must have been read already.
    void expect_syscall(Tid tid, int nr, std::optional<uint64_t> place);

    // Threads that gave the CPU up at a syscall entry (RW_REC_YIELD), in
    // the order the kernel side reported them, since the last call.
    struct Yield {
        Tid tid;
        int nr; // the syscall entered
    };
    std::vector<Yield> take_yields() { return std::exchange(yields_, {}); }
    // Threads the kernel side saw exit since the last call, as (tid, tgid):
    // a group leader's own exit reaches the supervisor's waitpid only once
    // its whole process is gone.
    std::vector<std::pair<Tid, Tid>> take_exits() { return std::exchange(exits_, {}); }

    // The thread's entries still expected are not coming (it was put back
    // before its call: a start image): their places are given up.
    void cancel_places(Tid tid);

    // seq of the thread's most recent syscall event.
    std::optional<uint64_t> last_syscall_seq(Tid tid) const;

    const std::vector<std::string>& problems() const { return problems_; }
    uint64_t records() const { return records_; }

private:
    struct Partial {
        uint64_t seq = 0;
        std::vector<MemoryRange> memory;
    };
    struct Expected {
        int nr;
        std::optional<uint64_t> place;
    };
    // Where the syscall event goes (cancelling places of entries the kernel
    // never reported).
    std::optional<uint64_t> place_for(Tid tid, int nr);
    // Where an open's descriptor leads, for ReadFileResolver.
    void note_open(const SyscallEvent& e);
    // The output of a read recorded by reference (RW_SC_FILE_DATA).
    void add_file_output(SyscallEvent& e, const rw_rec_syscall& s);

    EventOrderer& sink_;
    std::unordered_map<Tid, std::deque<Expected>> expected_;
    MappedFileResolver& files_;
    ReadFileResolver& reads_;
    std::unordered_map<Tid, Partial> partial_;
    std::unordered_map<Tid, uint64_t> last_syscall_;
    std::vector<std::string> problems_;
    std::vector<Yield> yields_;
    std::vector<std::pair<Tid, Tid>> exits_;
    uint64_t records_ = 0;
};

} // namespace rw
