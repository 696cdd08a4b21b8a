// Reads of files recorded by reference: once the trace holds a copy of a
// file the program keeps reading, the kernel side records where a read's
// bytes came from (the copy, an offset) instead of the bytes.
//
// The copy is the file's content for as long as nobody can write the file.
// The recorder takes a read lease on it (which the kernel grants only while
// nobody has it open for writing, and breaks before anyone opens it for
// writing or truncates it), hashes it under the lease, and only then lets
// the kernel side refer to it. When the lease breaks, a thread of the
// recorder withdraws the file from the kernel side before it releases the
// lease, so the writer's open returns only once later reads are recorded by
// content again.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "event.h"
#include "event_assembler.h"
#include "rewind_abi.h"

namespace rw {

class BpfCapture;
class FileStore;

class ReadCopies : public ReadFileResolver {
public:
    ReadCopies(FileStore& store, BpfCapture& capture);
    ~ReadCopies();
    ReadCopies(const ReadCopies&) = delete;
    ReadCopies& operator=(const ReadCopies&) = delete;

    // Blocks the signal a broken lease raises in the calling thread and in
    // every thread it starts later (it is taken by the lease thread): call
    // before the recorder starts any thread.
    static void block_lease_signal();

    // A read of `bytes` by content from a file the kernel side could refer
    // to (RW_SC_FILE_CANDIDATE), open at descriptor `fd` of thread `tid`.
    // A file read over more than twice its size (once, if the trace already
    // holds it) is copied and shared with the kernel side.
    void on_read_by_content(Tid tid, Tid tgid, int fd, const rw_file_identity& id, uint64_t bytes) override;
    void on_open(Tid tgid, int fd, const std::string& path) override;
    // The copy a read by reference (RW_SC_FILE_DATA) of this file names.
    std::string copy_of(const rw_file_identity& id, uint64_t bytes) override;

    struct Counts {
        uint64_t files_shared = 0;
        uint64_t leases_broken = 0;
        uint64_t reads_by_reference = 0;
        uint64_t bytes_by_reference = 0;
    };
    Counts counts() const;

private:
    using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t>; // kernel dev, inode, size, mtime
    struct Candidate {
        uint64_t bytes = 0;
        uint64_t next_try = 0; // bytes read by content before the next attempt
    };
    enum class Shared { Yes, No, NotNow };
    Shared share(Tid tid, Tid tgid, int fd, const rw_file_identity& id);
    // The file at `fd` of thread `tid`, or where `tgid` opened that
    // descriptor if it is closed by now, open for reading if it is still
    // this file; -1 if not.
    int open_again(Tid tid, Tid tgid, int fd, const rw_file_identity& id) const;
    void take_broken_leases();
    void release_all();

    FileStore& store_;
    BpfCapture& capture_;
    std::map<Key, Candidate> candidates_;
    std::map<Key, std::string> copies_;                 // every copy ever shared, by identity
    std::map<std::pair<Tid, int>, std::string> opened_; // (process, descriptor) -> the path it opened
    uint64_t reads_by_reference_ = 0;                   // (the recorder's thread only: no lock per read)
    uint64_t bytes_by_reference_ = 0;

    // Shared with the lease thread: the descriptors holding leases.
    mutable std::mutex mutex_;
    std::map<int, rw_file_identity> leased_;
    std::map<Key, int> lease_of_; // the descriptor holding each shared file's lease
    Counts counts_;               // files shared, leases broken
    std::thread lease_thread_;
    std::atomic<bool> stopping_{false};
};

} // namespace rw
