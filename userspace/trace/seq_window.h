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
#include <functional>
#include <map>

#include "event_sink.h"

namespace rw {

// How many events a record may arrive after later ones and still be put in
// its place by replay, which reorders traces written before the recorder's
// window grew (below) with this one.
inline constexpr size_t kSeqWindow = 1024;

// The recorder's window. Every seq drawn becomes one event, so an event
// whose seq is the next one to write goes out at once, and so do the held
// events that follow it; only a gap (a seq drawn and not yet seen) holds
// events back. A thread can be preempted inside the kernel side's program,
// between taking its seq and writing its record: with eight threads
// reading on two CPUs, records arrived 1,200 to 2,800 events late. So a
// gap is waited for while up to kRecordSeqWindow events wait behind it and
// they come to at most kRecordSeqWindowBytes of memory (at least
// kSeqWindow events whatever their size): about 60 ms of such a program at
// the consumer's pace. Then it is given up: its event, should it come, is
// late. Two kinds of gap are not waited for that long: a stalled syscall's
// (see late() below), once kSeqWindow events wait behind it and the
// `stalled` test names its seq, and a seq whose record the ring refused,
// which never comes (the trace says so anyway).
inline constexpr size_t kRecordSeqWindow = 65536;
inline constexpr size_t kRecordSeqWindowBytes = 64u << 20;

class SeqWindow : public EventSink {
public:
    // Whether the event of this seq is a stalled syscall's, which comes
    // late by design.
    using StalledTest = std::function<bool(uint64_t seq)>;

    explicit SeqWindow(EventSink& out, size_t min_events = kSeqWindow, size_t max_events = kRecordSeqWindow,
                       size_t max_bytes = kRecordSeqWindowBytes)
        : out_(out), min_events_(min_events), max_events_(max_events), max_bytes_(max_bytes)
    {}
    void set_stalled_test(StalledTest stalled) { stalled_ = std::move(stalled); }
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

    // Events waiting behind a gap.
    size_t held() const { return held_.size(); }

private:
    bool over_budget() const;
    void release_in_order();
    EventSink& out_;
    const size_t min_events_, max_events_, max_bytes_;
    StalledTest stalled_;
    std::multimap<uint64_t, Event> held_;
    size_t held_bytes_ = 0;
    uint64_t next_ = 0;      // the seq the next event written should have
    uint64_t asked_ = ~0ull; // the gap stalled_ was last asked about
    uint64_t late_ = 0;
};

} // namespace rw
