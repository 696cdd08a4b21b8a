// Events set aside on disk while the recorder holds them.
//
// A serialized process's events wait in the EventOrderer behind a thread's
// open reservation (a thread that gave the CPU up in a syscall that has not
// returned). A thread blocked for the whole run (a main thread in
// pthread_join, an acceptor in accept) holds back everything the others do:
// 8 threads reading 6.5 GB made the recorder grow to 7.1 GB. Past a budget
// the orderer encodes held events here instead, into an unlinked file of
// the trace's directory, and reads them back when their turn comes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "event.h"

namespace rw {

class EventSpill {
public:
    struct Place {
        uint32_t block = 0;  // events go to the file in compressed blocks
        uint32_t offset = 0; // within the block's raw bytes
        uint32_t size = 0;
    };

    // Nothing is created until the first put().
    explicit EventSpill(std::filesystem::path dir);
    ~EventSpill();
    EventSpill(const EventSpill&) = delete;
    EventSpill& operator=(const EventSpill&) = delete;

    // Nothing if the event could not be set aside (no space, say): the
    // caller keeps it in memory instead.
    std::optional<Place> put(const Event& event);
    // Events are taken roughly in the order they were put: the block last
    // read stays decompressed.
    Event take(const Place& place);
    // Nothing set aside is needed any more: the file is emptied.
    void clear();
    uint64_t bytes_put() const { return put_; }

private:
    struct Block {
        uint64_t file_offset = 0;
        uint32_t compressed = 0;
        uint32_t raw = 0;
    };
    bool open_file();
    bool write_block();
    std::filesystem::path dir_;
    int fd_ = -1;
    bool failed_ = false; // the file could not be made
    // A block could not be written (no space, say): nothing more is set
    // aside until clear() frees the file, rather than compressing the
    // pending block again at every event.
    bool full_ = false;
    // The block being filled, a megabyte of raw events: written whole and
    // compressed (the held data of a read-heavy program compresses as well
    // as the trace does; one write per event also made ext4 clear a fresh
    // page cache folio for each, 40% of the recorder's time).
    std::vector<uint8_t> pending_;
    static constexpr size_t kBlockBytes = 1u << 20;
    std::vector<Block> blocks_;
    uint64_t on_disk_ = 0;
    uint64_t put_ = 0;
    std::vector<uint8_t> compressed_;
    std::vector<uint8_t> cache_;
    std::optional<uint32_t> cached_block_;
};

} // namespace rw
