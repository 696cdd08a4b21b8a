// Puts events in the order the recorder's thread scheduler ran them.
//
// A thread of a serialized process gives up the CPU at a syscall entry; its
// place in the stream is that moment (a reserved seq), but the kernel side
// reports the syscall only when it returns, after other threads may have run
// and produced events. Events after an open reservation wait here until it
// is filled (or cancelled: the thread was killed inside the syscall).
// Without open reservations, events pass straight through.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "event.h"
#include "event_sink.h"
#include "event_spill.h"

namespace rw {

class EventOrderer : public EventSink {
public:
    explicit EventOrderer(EventSink& out) : out_(out) {}

    // Held events beyond `budget` bytes go to an unlinked file in `dir`
    // (event_spill.h); without this call all are kept in memory.
    void spill_to(const std::filesystem::path& dir, size_t budget);
    static constexpr size_t kDefaultHeldBudget = 256u << 20;

    void reserve(uint64_t seq) { open_.insert(seq); }
    // `event` carries a reserved seq.
    void fill(Event event);
    void cancel(uint64_t seq);
    void emit(Event event) override;
    // The end of the recording: whatever still waits goes out, in order;
    // returns how many reservations were never filled.
    size_t finish();

    size_t held() const { return held_.size() + spilled_.size(); }
    size_t open() const { return open_.size(); }
    size_t held_bytes() const { return held_bytes_; } // in memory
    uint64_t spilled_bytes() const { return spill_ ? spill_->bytes_put() : 0; }

private:
    void hold(uint64_t seq, Event event);
    void release();

    EventSink& out_;
    std::set<uint64_t> open_;
    // Held in memory, and set aside on disk (small nodes: a million of them
    // must not cost what the events would).
    std::map<uint64_t, Event> held_;
    std::map<uint64_t, EventSpill::Place> spilled_;
    size_t held_bytes_ = 0;
    size_t budget_ = SIZE_MAX;
    std::unique_ptr<EventSpill> spill_;
};

} // namespace rw
