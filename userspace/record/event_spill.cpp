#include "event_spill.h"

#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

#include "bytes.h"
#include "event_codec.h"
#include "positional_io.h"

namespace rw {
namespace {

void read_all_at(int fd, uint8_t* data, size_t size, uint64_t offset)
{
    ssize_t n = pread_full(fd, data, size, offset);
    if (n < 0)
        throw std::system_error(errno, std::generic_category(), "reading back held events");
    if (static_cast<size_t>(n) < size)
        throw std::runtime_error("reading back held events: the file ends early");
}

} // namespace

EventSpill::EventSpill(std::filesystem::path dir) : dir_(std::move(dir)) {}

EventSpill::~EventSpill()
{
    if (fd_ >= 0)
        ::close(fd_);
}

bool EventSpill::open_file()
{
    if (fd_ >= 0)
        return true;
    if (failed_)
        return false;
    // Unlinked from the start: nothing is left behind, whatever ends the recorder.
    fd_ = ::open(dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0) {
        std::string path = (dir_ / ".held-events-XXXXXX").string();
        fd_ = ::mkostemp(path.data(), O_CLOEXEC);
        if (fd_ >= 0)
            ::unlink(path.c_str());
    }
    failed_ = fd_ < 0;
    return !failed_;
}

bool EventSpill::write_block()
{
    compressed_.resize(ZSTD_compressBound(pending_.size()));
    size_t n = ZSTD_compress(compressed_.data(), compressed_.size(), pending_.data(), pending_.size(), 1);
    if (ZSTD_isError(n) || !pwrite_full(fd_, compressed_.data(), n, on_disk_))
        return false;
    blocks_.push_back({on_disk_, static_cast<uint32_t>(n), static_cast<uint32_t>(pending_.size())});
    on_disk_ += n;
    pending_.clear();
    return true;
}

std::optional<EventSpill::Place> EventSpill::put(const Event& event)
{
    if (full_ || !open_file())
        return std::nullopt;
    if (pending_.size() >= kBlockBytes && !write_block()) {
        full_ = true; // the block stays pending (and readable); this event stays with the caller
        return std::nullopt;
    }
    size_t before = pending_.size();
    encode_event(event, pending_);
    size_t size = pending_.size() - before;
    if (pending_.size() > UINT32_MAX) {
        pending_.resize(before);
        return std::nullopt;
    }
    put_ += size;
    return Place{static_cast<uint32_t>(blocks_.size()), static_cast<uint32_t>(before), static_cast<uint32_t>(size)};
}

Event EventSpill::take(const Place& place)
{
    const std::vector<uint8_t>* raw = &pending_;
    if (place.block < blocks_.size()) {
        if (cached_block_ != place.block) {
            const Block& b = blocks_[place.block];
            compressed_.resize(b.compressed);
            read_all_at(fd_, compressed_.data(), b.compressed, b.file_offset);
            cache_.resize(b.raw);
            size_t n = ZSTD_decompress(cache_.data(), cache_.size(), compressed_.data(), b.compressed);
            if (ZSTD_isError(n) || n != b.raw)
                throw std::runtime_error("reading back held events: a block does not decompress");
            cached_block_ = place.block;
        }
        raw = &cache_;
    }
    if (static_cast<uint64_t>(place.offset) + place.size > raw->size())
        throw std::runtime_error("reading back held events: a place outside its block");
    ByteReader reader(std::span<const uint8_t>(*raw).subspan(place.offset, place.size));
    return decode_event(reader);
}

void EventSpill::clear()
{
    if (fd_ >= 0 && on_disk_ > 0 && ::ftruncate(fd_, 0) != 0) {
        // Only space is lost; later blocks are written from the start again.
    }
    blocks_.clear();
    pending_.clear();
    cached_block_.reset();
    on_disk_ = 0;
    full_ = false;
}

} // namespace rw
