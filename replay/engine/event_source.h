// The trace's events in stream order, with lookahead per thread: replay
// sometimes needs a thread's next event while other threads' events come
// first in the stream.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <set>

#include "event.h"
#include "event_stream.h"
#include "seq_window.h"

namespace rw::replay {

struct IndexedEvent {
    uint64_t index = 0;
    Event event;
    uint64_t seq = 0; // event_seq(event), kept for ordering a parallel trace's window
};

class EventSource {
public:
    explicit EventSource(EventStreamReader reader) : reader_(std::move(reader)) {}

    // The threads of the trace ran in parallel (record --parallel): the
    // stream holds the order the kernel side's records arrived in, which
    // can differ a little from the global seq order between threads. Events
    // are then given in seq order, looking this many events ahead.
    static constexpr size_t kSeqWindow = rw::kSeqWindow;
    void order_by_seq() { by_seq_ = true; }

    // The next event in stream order, or nothing at the end of the stream.
    const IndexedEvent* peek();
    // The event `ahead` places after peek()'s in stream order (not for a
    // trace ordered by seq); nothing past the end of the stream.
    const IndexedEvent* peek_ahead(size_t ahead);
    std::optional<IndexedEvent> next();
    // The first event not yet taken by next() that belongs to `tid` (by
    // event_tid; a fork belongs to its parent), skipping `skip` of them;
    // nothing if it is not among the next `within` events.
    const IndexedEvent* peek_for_task(Tid tid, size_t skip = 0, size_t within = SIZE_MAX);

    // Removes and returns the first event not yet taken that belongs to
    // `tid`, ahead of other threads' events (for causal order replay must
    // restore, such as a vfork child's exec before its parent's return).
    std::optional<IndexedEvent> take_for_task(Tid tid);

    // Where the stream stands, for snapshots: the next event next() returns,
    // and the later ones already taken out of order.
    struct Checkpoint {
        uint64_t cursor = 0;
        std::set<uint64_t> taken_ahead;
    };
    Checkpoint checkpoint() const;
    // The checkpoint as if event `index`, taken in order by next(), had not
    // been taken (a snapshot in the middle of replaying it).
    Checkpoint checkpoint_before(uint64_t index) const;
    void restore(const Checkpoint& c);

    // Why the stream ended (meaningful once peek() returned nullptr).
    const StreamEnd& end() const { return reader_.end(); }
    uint64_t next_index() const;

private:
    bool fill_one();
    void erase_at(size_t i);
    // Index in buffer_ of the next event to give.
    std::optional<size_t> front();
    bool by_seq_ = false;
    EventStreamReader reader_;
    std::deque<IndexedEvent> buffer_;
    size_t inversions_ = 0; // neighbours in buffer_ out of seq order
    uint64_t read_ = 0;
    std::set<uint64_t> taken_ahead_; // consumed out of order, not yet reached in order
};

} // namespace rw::replay
