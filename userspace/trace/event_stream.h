// The event stream file: a header, then self-checking chunks of events.
//
//   file header   8-byte magic "REWINDEV", u32 format version, u32 flags
//   chunk         40-byte header (sizes, event count, first event index,
//                 xxh64 of the payload, xxh32 of the header itself),
//                 then the zstd-compressed encoded events
//
// A chunk is written with one write() call, so a recorder killed at any
// moment leaves every earlier chunk intact; readers stop at the first chunk
// that is incomplete or fails its checksum and say so.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "bytes.h"
#include "event.h"
#include "unique_fd.h"

namespace rw {

class FileCopies;

// Version 2 added memory ranges that name a file copy instead of holding
// bytes (range bit 8: reads of files by reference); version 3 writes to
// mapped files (syscall flag 64, with an offset after the file reference).
// An older trace is a newer one without them, so all are read; a rewind
// that reads only older versions refuses a newer trace up front instead of
// stopping at the first event it cannot read.
inline constexpr uint32_t kTraceFormatVersion = 4;
inline constexpr uint32_t kOldestTraceFormatVersion = 1;

// A trace of a format version this rewind does not read: not corrupt, but
// written by another rewind.
struct FormatVersionError : FormatError {
    using FormatError::FormatError;
};

// Throws FormatVersionError, naming `what` and the versions this rewind
// reads, unless it reads `version`.
void require_readable_format(const std::string& what, uint32_t version);

class EventStreamWriter {
public:
    static constexpr size_t kDefaultChunkBytes = 1 << 20;

    // Creates the file (mode 0600) and writes its header.
    explicit EventStreamWriter(const std::filesystem::path& file, int zstd_level = 1,
                               size_t chunk_bytes = kDefaultChunkBytes);
    ~EventStreamWriter();
    EventStreamWriter(const EventStreamWriter&) = delete;
    EventStreamWriter& operator=(const EventStreamWriter&) = delete;

    void append(const Event& event);
    // Writes the events appended so far as one chunk.
    void flush();
    bool has_pending() const { return pending_events_ > 0; }

    uint64_t events_written() const { return first_event_ + pending_events_; }
    // Events in chunks that reached the file whole (a failed flush leaves
    // its chunk out).
    uint64_t events_on_disk() const { return first_event_; }
    uint64_t file_bytes() const { return file_bytes_; }
    // Frees the disk blocks of the stream before byte `offset` (a chunk's
    // start; the header and the chunks from there on stay): the flight
    // recorder drops what its window no longer holds. The file keeps its
    // size; those bytes read as zeros.
    void release_before(uint64_t offset);

private:
    int fd_ = -1;
    int level_;
    size_t chunk_bytes_;
    std::vector<uint8_t> raw_;
    std::vector<uint8_t> compressed_;
    uint64_t first_event_ = 0;
    uint32_t pending_events_ = 0;
    uint64_t file_bytes_ = 0;
    struct Compressor;
    std::unique_ptr<Compressor> zstd_;
};

// Writes to `to` (created, mode 0600) a stream of the chunks of `from`
// from byte `offset` on (a chunk's start, whose first event is
// `first_event`), renumbered from event 0; stops at the first chunk that
// is incomplete or fails its checks. Returns the events written. Throws
// std::system_error or FormatError.
uint64_t write_stream_tail(const std::filesystem::path& from, uint64_t offset, uint64_t first_event,
                           const std::filesystem::path& to);

// Where and why reading stopped.
struct StreamEnd {
    enum class Kind { Clean, Truncated, Corrupt };
    Kind kind = Kind::Clean;
    uint64_t chunks = 0;      // complete chunks read
    uint64_t events = 0;      // events read
    uint64_t file_offset = 0; // offset of the first unreadable byte
    std::string reason;
};

std::string describe(const StreamEnd& end);

class EventStreamReader {
public:
    // Throws FormatError if the file is not an event stream of a supported
    // version, or not a regular file (opened as trace_file.h opens a
    // trace's files, relative to the directory it is in).
    explicit EventStreamReader(const std::filesystem::path& file);
    // The stream open at `fd` (owned from now on); `name` for messages.
    EventStreamReader(UniqueFd fd, const std::string& name);
    ~EventStreamReader();
    EventStreamReader(EventStreamReader&& other) noexcept;
    EventStreamReader(const EventStreamReader&) = delete;
    EventStreamReader& operator=(const EventStreamReader&) = delete;

    // False once no further event can be read; then end() says why.
    bool next(Event& out);
    // Positions the reader so that next() returns event `index` (which must
    // not lie past the end of the readable stream).
    void seek(uint64_t index);
    const StreamEnd& end() const { return end_; }
    uint64_t next_index() const { return end_.events; }
    // Outputs recorded by reference to a file copy (MemoryRange::file_copy)
    // get their bytes from `copies`; one it cannot give ends the stream as
    // corrupt there. Without, such ranges keep no bytes.
    void read_copies_from(std::shared_ptr<FileCopies> copies) { copies_ = std::move(copies); }

private:
    void fill_from_copies(Event& event);
    bool load_chunk();
    struct ChunkStart {
        uint64_t first_event;
        uint64_t offset;
    };
    std::vector<ChunkStart> chunks_; // every chunk read so far, for seek()
    int fd_ = -1;
    uint64_t offset_ = 0;
    std::vector<uint8_t> raw_;
    size_t raw_pos_ = 0;
    uint32_t remaining_in_chunk_ = 0;
    bool finished_ = false;
    StreamEnd end_;
    std::shared_ptr<FileCopies> copies_;
};

} // namespace rw
