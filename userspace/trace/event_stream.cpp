#include "event_stream.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "event_codec.h"
#include "file_copies.h"
#include "positional_io.h"
#include "trace_file.h"

namespace rw {
namespace {

constexpr char kMagic[8] = {'R', 'E', 'W', 'I', 'N', 'D', 'E', 'V'};
constexpr uint32_t kChunkMagic = 0x4b435752; // "RWCK"
constexpr size_t kFileHeaderSize = 16;

struct ChunkHeader {
    uint32_t magic;
    uint32_t compressed_size;
    uint32_t raw_size;
    uint32_t event_count;
    uint64_t first_event;
    uint64_t payload_hash;
    uint32_t reserved;
    uint32_t header_hash; // xxh32 of the bytes above
};
static_assert(sizeof(ChunkHeader) == 40);

uint32_t header_hash(const ChunkHeader& h)
{
    return XXH32(&h, offsetof(ChunkHeader, header_hash), 0);
}

void write_all(int fd, const struct iovec* iov, int count)
{
    std::vector<struct iovec> v(iov, iov + count);
    size_t i = 0;
    while (i < v.size()) {
        ssize_t n = ::writev(fd, v.data() + i, static_cast<int>(v.size() - i));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw std::system_error(errno, std::generic_category(), "writing the event stream");
        }
        size_t left = static_cast<size_t>(n);
        while (i < v.size() && left >= v[i].iov_len)
            left -= v[i++].iov_len;
        if (i < v.size()) {
            v[i].iov_base = static_cast<char*>(v[i].iov_base) + left;
            v[i].iov_len -= left;
        }
    }
}

// Reads up to n bytes at offset; returns how many were read.
size_t read_at(int fd, void* buf, size_t n, uint64_t offset)
{
    ssize_t got = pread_full(fd, buf, n, offset);
    if (got < 0)
        throw std::system_error(errno, std::generic_category(), "reading the event stream");
    return static_cast<size_t>(got);
}

} // namespace

struct EventStreamWriter::Compressor {
    ZSTD_CCtx* ctx = ZSTD_createCCtx();
    ~Compressor() { ZSTD_freeCCtx(ctx); }
};

void require_readable_format(const std::string& what, uint32_t version)
{
    if (version < kOldestTraceFormatVersion || version > kTraceFormatVersion)
        throw FormatVersionError(what + " has trace format version " + std::to_string(version) +
                                 "; this rewind reads versions " + std::to_string(kOldestTraceFormatVersion) + " to " +
                                 std::to_string(kTraceFormatVersion));
}

EventStreamWriter::EventStreamWriter(const std::filesystem::path& file, int zstd_level, size_t chunk_bytes)
    : level_(zstd_level), chunk_bytes_(chunk_bytes), zstd_(std::make_unique<Compressor>())
{
    fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), "creating " + file.string());
    uint8_t header[kFileHeaderSize] = {};
    std::memcpy(header, kMagic, 8);
    uint32_t version = kTraceFormatVersion;
    std::memcpy(header + 8, &version, 4);
    struct iovec iov = {header, sizeof(header)};
    write_all(fd_, &iov, 1);
    file_bytes_ = sizeof(header);
}

EventStreamWriter::~EventStreamWriter()
{
    try {
        flush();
    } catch (...) {
        // The destructor cannot report; callers flush explicitly to see errors.
    }
    if (fd_ >= 0)
        ::close(fd_);
}

void EventStreamWriter::append(const Event& event)
{
    encode_event(event, raw_);
    pending_events_++;
    if (raw_.size() >= chunk_bytes_)
        flush();
}

void EventStreamWriter::flush()
{
    if (!pending_events_)
        return;
    compressed_.resize(ZSTD_compressBound(raw_.size()));
    size_t n = ZSTD_compressCCtx(zstd_->ctx, compressed_.data(), compressed_.size(), raw_.data(), raw_.size(), level_);
    if (ZSTD_isError(n))
        throw std::runtime_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    if (n > UINT32_MAX || raw_.size() > UINT32_MAX)
        throw std::runtime_error("event chunk larger than 4 GiB");
    ChunkHeader h{};
    h.magic = kChunkMagic;
    h.compressed_size = static_cast<uint32_t>(n);
    h.raw_size = static_cast<uint32_t>(raw_.size());
    h.event_count = pending_events_;
    h.first_event = first_event_;
    h.payload_hash = XXH64(compressed_.data(), n, 0);
    h.header_hash = header_hash(h);
    struct iovec iov[2] = {{&h, sizeof(h)}, {compressed_.data(), n}};
    try {
        write_all(fd_, iov, 2);
    } catch (const std::system_error&) {
        // (The disk filled, say.) No torn chunk: the stream ends cleanly
        // after the last whole one. The next write goes there too, not at
        // the torn chunk's end: the space the cut freed lets a later, final
        // flush succeed, and past a hole of zeros it would read as corrupt.
        if (::ftruncate(fd_, static_cast<off_t>(file_bytes_)) != 0) {
        }
        ::lseek(fd_, static_cast<off_t>(file_bytes_), SEEK_SET);
        throw;
    }
    file_bytes_ += sizeof(h) + n;
    first_event_ += pending_events_;
    pending_events_ = 0;
    raw_.clear();
}

void EventStreamWriter::release_before(uint64_t offset)
{
    // Whole blocks only, after the file header's.
    constexpr uint64_t kBlock = 4096;
    uint64_t end = std::min(offset, file_bytes_) / kBlock * kBlock;
    if (end > kBlock &&
        ::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(kBlock),
                    static_cast<off_t>(end - kBlock)) != 0 &&
        errno != EOPNOTSUPP)
        throw std::system_error(errno, std::generic_category(), "freeing the start of the event stream");
}

uint64_t write_stream_tail(const std::filesystem::path& from, uint64_t offset, uint64_t first_event,
                           const std::filesystem::path& to)
{
    UniqueFd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
    if (in.get() < 0)
        throw std::system_error(errno, std::generic_category(), "opening " + from.string());
    char header[kFileHeaderSize];
    if (pread_full(in.get(), header, sizeof header, 0) != static_cast<ssize_t>(sizeof header) ||
        std::memcmp(header, kMagic, 8) != 0)
        throw FormatError(from.string() + " is not an event stream");
    UniqueFd out(::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (out.get() < 0)
        throw std::system_error(errno, std::generic_category(), "creating " + to.string());
    struct iovec head = {header, sizeof header};
    write_all(out.get(), &head, 1);
    uint64_t events = 0;
    std::vector<uint8_t> payload;
    for (;;) {
        ChunkHeader h{};
        if (pread_full(in.get(), &h, sizeof h, offset) != static_cast<ssize_t>(sizeof h) || h.magic != kChunkMagic ||
            header_hash(h) != h.header_hash || h.first_event != first_event + events)
            break;
        payload.resize(h.compressed_size);
        if (pread_full(in.get(), payload.data(), payload.size(), offset + sizeof h) !=
                static_cast<ssize_t>(payload.size()) ||
            XXH64(payload.data(), payload.size(), 0) != h.payload_hash)
            break;
        offset += sizeof h + payload.size();
        h.first_event = events;
        h.header_hash = header_hash(h);
        struct iovec iov[2] = {{&h, sizeof h}, {payload.data(), payload.size()}};
        write_all(out.get(), iov, 2);
        events += h.event_count;
    }
    if (::fsync(out.get()) != 0)
        throw std::system_error(errno, std::generic_category(), "writing " + to.string());
    return events;
}

std::string describe(const StreamEnd& end)
{
    switch (end.kind) {
    case StreamEnd::Kind::Clean:
        return "complete (" + std::to_string(end.events) + " events in " + std::to_string(end.chunks) + " chunks)";
    case StreamEnd::Kind::Truncated:
        return "truncated after event " + std::to_string(end.events) + " (chunk " + std::to_string(end.chunks) +
               " at byte " + std::to_string(end.file_offset) + " is incomplete: " + end.reason + ")";
    case StreamEnd::Kind::Corrupt:
        return "corrupt after event " + std::to_string(end.events) + " (chunk " + std::to_string(end.chunks) +
               " at byte " + std::to_string(end.file_offset) + ": " + end.reason + ")";
    }
    return "?";
}

EventStreamReader::EventStreamReader(const std::filesystem::path& file)
    : EventStreamReader(open_trace_file(file.parent_path().empty() ? "." : file.parent_path(), file.filename()),
                        file.string())
{}

EventStreamReader::EventStreamReader(UniqueFd fd, const std::string& name)
{
    uint8_t header[kFileHeaderSize];
    if (read_at(fd.get(), header, sizeof(header), 0) != sizeof(header) || std::memcmp(header, kMagic, 8) != 0)
        throw FormatError(name + " is not a rewind event stream");
    uint32_t version;
    std::memcpy(&version, header + 8, 4);
    require_readable_format(name, version);
    fd_ = fd.release();
    offset_ = sizeof(header);
    end_.file_offset = offset_;
}

EventStreamReader::EventStreamReader(EventStreamReader&& other) noexcept
    : chunks_(std::move(other.chunks_)), fd_(std::exchange(other.fd_, -1)), offset_(other.offset_),
      raw_(std::move(other.raw_)), raw_pos_(other.raw_pos_), remaining_in_chunk_(other.remaining_in_chunk_),
      finished_(other.finished_), end_(std::move(other.end_)), copies_(std::move(other.copies_))
{}

EventStreamReader::~EventStreamReader()
{
    if (fd_ >= 0)
        ::close(fd_);
}

bool EventStreamReader::load_chunk()
{
    auto stop = [&](StreamEnd::Kind kind, std::string reason) {
        end_.kind = kind;
        end_.reason = std::move(reason);
        end_.file_offset = offset_;
        finished_ = true;
        return false;
    };
    ChunkHeader h;
    size_t got = read_at(fd_, &h, sizeof(h), offset_);
    if (got == 0)
        return stop(StreamEnd::Kind::Clean, "");
    if (got < sizeof(h))
        return stop(StreamEnd::Kind::Truncated, "header has " + std::to_string(got) + " of 40 bytes");
    if (h.magic != kChunkMagic || header_hash(h) != h.header_hash)
        return stop(StreamEnd::Kind::Corrupt, "chunk header checksum mismatch");
    if (h.first_event != end_.events)
        return stop(StreamEnd::Kind::Corrupt, "chunk starts at event " + std::to_string(h.first_event) + ", expected " +
                                                  std::to_string(end_.events));
    if (chunks_.empty() || chunks_.back().first_event < h.first_event)
        chunks_.push_back({h.first_event, offset_});
    // The header's sizes are a crafted trace's to choose (its checksum is
    // no secret): nothing is allocated for more than the file holds, or
    // for another size than the zstd frame says it holds.
    struct stat st {};
    uint64_t after_header = offset_ + sizeof(h);
    uint64_t left = ::fstat(fd_, &st) == 0 && static_cast<uint64_t>(st.st_size) > after_header
                        ? static_cast<uint64_t>(st.st_size) - after_header
                        : 0;
    if (h.compressed_size > left)
        return stop(StreamEnd::Kind::Truncated,
                    "payload has " + std::to_string(left) + " of " + std::to_string(h.compressed_size) + " bytes");
    std::vector<uint8_t> compressed(h.compressed_size);
    got = read_at(fd_, compressed.data(), compressed.size(), after_header);
    if (got < compressed.size())
        return stop(StreamEnd::Kind::Truncated,
                    "payload has " + std::to_string(got) + " of " + std::to_string(h.compressed_size) + " bytes");
    if (XXH64(compressed.data(), compressed.size(), 0) != h.payload_hash)
        return stop(StreamEnd::Kind::Corrupt, "payload checksum mismatch");
    if (ZSTD_getFrameContentSize(compressed.data(), compressed.size()) != h.raw_size)
        return stop(StreamEnd::Kind::Corrupt, "payload does not decompress to its stated size");
    raw_.resize(h.raw_size);
    size_t n = ZSTD_decompress(raw_.data(), raw_.size(), compressed.data(), compressed.size());
    if (ZSTD_isError(n) || n != h.raw_size)
        return stop(StreamEnd::Kind::Corrupt, "payload does not decompress");
    raw_pos_ = 0;
    remaining_in_chunk_ = h.event_count;
    offset_ += sizeof(h) + h.compressed_size;
    return true;
}

void EventStreamReader::seek(uint64_t index)
{
    // Start from the last known chunk at or before the index, then read on.
    uint64_t first = 0, offset = kFileHeaderSize;
    for (const auto& c : chunks_) {
        if (c.first_event > index)
            break;
        first = c.first_event;
        offset = c.offset;
    }
    offset_ = offset;
    raw_.clear();
    raw_pos_ = 0;
    remaining_in_chunk_ = 0;
    finished_ = false;
    end_ = StreamEnd{};
    end_.events = first;
    end_.file_offset = offset;
    end_.chunks = static_cast<uint64_t>(
        std::count_if(chunks_.begin(), chunks_.end(), [&](const ChunkStart& c) { return c.first_event < first; }));
    Event skipped;
    while (end_.events < index && next(skipped)) {
    }
}

void EventStreamReader::fill_from_copies(Event& event)
{
    auto* sc = std::get_if<SyscallEvent>(&event);
    if (!sc)
        return;
    for (auto& m : sc->memory)
        if (!m.file_copy.empty())
            m.bytes = copies_->read(m.file_copy, m.file_offset, m.length);
}

bool EventStreamReader::next(Event& out)
{
    if (finished_)
        return false;
    while (remaining_in_chunk_ == 0) {
        if (raw_pos_ != raw_.size()) {
            end_.kind = StreamEnd::Kind::Corrupt;
            end_.reason = "chunk has bytes after its last event";
            finished_ = true;
            return false;
        }
        uint64_t chunk_start = offset_;
        if (!load_chunk())
            return false;
        end_.file_offset = chunk_start;
        end_.chunks++;
    }
    try {
        ByteReader r({raw_.data() + raw_pos_, raw_.size() - raw_pos_});
        decode_event(r, out);
        raw_pos_ += r.position();
        if (copies_)
            fill_from_copies(out);
    } catch (const FormatError& e) {
        end_.kind = StreamEnd::Kind::Corrupt;
        end_.reason = std::string("undecodable event: ") + e.what();
        end_.chunks--; // this chunk did not read completely
        finished_ = true;
        return false;
    }
    remaining_in_chunk_--;
    end_.events++;
    if (remaining_in_chunk_ == 0)
        end_.file_offset = offset_;
    return true;
}

} // namespace rw
