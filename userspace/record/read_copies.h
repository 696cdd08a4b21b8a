// Reads of files recorded by reference: once the trace holds a copy of a
// file the program keeps reading, the kernel side records where a read's
// bytes came from (the copy, an offset) instead of the bytes.
//
// The copy is the file's content for as long as nobody writes the file, and
// nothing here holds anything other processes could feel (no lease, no
// lock, no descriptor kept open). The recorder registers the file with the
// kernel side, opens it (the kernel side counts its writers at that open's
// return), shares it only if nobody had it open for writing, and hashes it;
// from registration on, any open for writing in any process deletes the
// entry before the opener can write. At each read the kernel side checks
// again that the file has no writer and the identity (with the ctime, which
// any write and any change of the mtime move) the copy was made with.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
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
    ReadCopies(const ReadCopies&) = delete;
    ReadCopies& operator=(const ReadCopies&) = delete;

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
        uint64_t copies_retired = 0; // by an open for writing
        uint64_t reads_by_reference = 0;
        uint64_t bytes_by_reference = 0;
    };
    Counts counts() const;

private:
    using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t, int64_t>; // kernel dev, inode, size, mtime, ctime
    static Key key_of(const rw_file_identity& id) { return {id.dev, id.ino, id.size, id.mtime_ns, id.ctime_ns}; }
    struct Candidate {
        uint64_t bytes = 0;
        uint64_t next_try = 0; // bytes read by content before the next attempt
    };
    enum class Shared { Yes, No, NotNow };
    Shared share(Tid tid, Tid tgid, int fd, const rw_file_identity& id);
    // Registered, opened, checked for writers, hashed: the copy's hash, or
    // empty (then `later` says whether to try again at the next read).
    std::string copy_registered(Tid tid, Tid tgid, int fd, const rw_file_identity& id, bool& later);
    // The file at `fd` of thread `tid`, or where `tgid` opened that
    // descriptor if it is closed by now, open for reading if it is still
    // this file; -1 if not.
    int open_again(Tid tid, Tid tgid, int fd, const rw_file_identity& id) const;

    FileStore& store_;
    BpfCapture& capture_;
    std::map<Key, Candidate> candidates_;
    std::map<Key, std::string> copies_;                 // every copy ever shared, by identity
    std::map<std::pair<Tid, int>, std::string> opened_; // (process, descriptor) -> the path it opened
    uint64_t files_shared_ = 0;
    uint64_t reads_by_reference_ = 0;
    uint64_t bytes_by_reference_ = 0;
};

} // namespace rw
