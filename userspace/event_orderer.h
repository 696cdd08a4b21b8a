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
#include <map>
#include <set>

#include "event.h"

namespace rw {

class EventSink {
public:
    virtual ~EventSink() = default;
    virtual void emit(Event event) = 0;
};

class EventOrderer : public EventSink {
public:
    explicit EventOrderer(EventSink& out) : out_(out) {}

    void reserve(uint64_t seq) { open_.insert(seq); }
    // `event` carries a reserved seq.
    void fill(Event event);
    void cancel(uint64_t seq);
    void emit(Event event) override;
    // The end of the recording: whatever still waits goes out, in order;
    // returns how many reservations were never filled.
    size_t finish();

    size_t held() const { return held_.size(); }
    size_t open() const { return open_.size(); }

private:
    void release();

    EventSink& out_;
    std::set<uint64_t> open_;
    std::map<uint64_t, Event> held_;
};

} // namespace rw
