// Puts the events of a parallel recording in seq order before they are
// written.
//
// Threads running on several CPUs take their seq and then write their
// record into the one ring buffer; two CPUs can write in the opposite order
// of their seqs, so the ring's order differs a little from the global one.
// A trace in seq order lets every reader (replay, a debugger's positions,
// dump) take an event's index as its place in that order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "event_orderer.h"

namespace rw {

// How many events a record may arrive after later ones and still be put in
// its place (replay of older traces reorders with the same window).
inline constexpr size_t kSeqWindow = 1024;

class SeqWindow : public EventSink {
public:
    explicit SeqWindow(EventSink& out) : out_(out) {}
    void emit(Event event) override;
    // The end of the recording: what is held goes out, in order.
    void finish();
    // Events that arrived after a later one had already been written,
    // other than a stalled syscall's: a thread whose syscall the kernel side
    // could not finish stays stopped until the supervisor has rebuilt it
    // (which may take a million other events), so it did nothing that the
    // events written meanwhile could depend on through a synchronization
    // call, and its late place changes no order replay must keep.
    uint64_t late() const { return late_; }

private:
    EventSink& out_;
    std::multimap<uint64_t, Event> held_;
    uint64_t written_up_to_ = 0;
    bool written_any_ = false;
    uint64_t late_ = 0;
};

} // namespace rw
