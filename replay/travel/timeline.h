// The snapshots a debugging session keeps, and which one to start from to
// reach a position. Automatic snapshots at event boundaries are thinned
// exponentially (Boothe): behind the newest, at most one per power-of-two
// distance, so going back a distance D re-executes O(D). Snapshots at
// debugger stops are kept for the most recent stops; user checkpoints and
// the beginning are never thinned.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include "position.h"
#include "snapshot.h"

namespace rw::replay {

class Timeline {
public:
    // Landmarks (persistent, loaded from the trace) are never thinned.
    enum class Kind { Beginning, Boundary, Stop, Checkpoint, Anchor, Landmark };
    struct Entry {
        uint64_t id = 0; // checkpoints: 1, 2, … as the user sees them; others: internal
        Kind kind = Kind::Boundary;
        perfclock::Position pos;
        std::unique_ptr<ReplaySnapshot> snapshot;
        std::string note; // for checkpoints: where the user was
        mutable uint64_t last_used = 0; // when it was added or last chosen to start from
    };

    static constexpr size_t kStopSnapshotsKept = 16;
    static constexpr size_t kAnchorsKept = 256;

    // By default memory_is_short() (memory_headroom.h).
    explicit Timeline(std::function<bool()> memory_short = {});

    const Entry& add(Kind kind, perfclock::Position pos, std::unique_ptr<ReplaySnapshot> snapshot,
                     std::string note = {});
    // A snapshot taken at an interrupt, named by itself: {event, [anchor]}.
    const Entry& add_anchor(uint64_t event, uint32_t run, uint64_t ordinal, std::unique_ptr<ReplaySnapshot> snapshot);
    // The snapshot an anchored position names, if it is still kept.
    const Entry* anchor(const perfclock::Segment& s) const;
    // The latest snapshot from which `target` is reached by going forward.
    const Entry* best_for(const perfclock::Position& target) const;
    // The latest snapshot strictly before `pos`.
    const Entry* strictly_before(const perfclock::Position& pos) const;
    const Entry* find_checkpoint(uint64_t id) const;
    bool has_at(const perfclock::Position& pos) const;
    std::vector<const Entry*> checkpoints() const;
    bool remove_checkpoint(uint64_t id);
    void remove(const Entry* entry);
    size_t size() const { return entries_.size(); }
    // Drops every snapshot (the replayed world they copy is going away).
    void clear() { entries_.clear(); }
    // Snapshots let go because memory was short.
    size_t released_for_memory() const { return released_for_memory_; }
    // The anchors a tool still needs (by id): while memory is short, they
    // go only after every other thinnable snapshot. A new anchor is held
    // until the next call.
    void hold_anchors(std::set<uint64_t> ids) { held_anchors_ = std::move(ids); }

private:
    void thin();
    // While memory is short, lets the least recently used thinnable
    // snapshot go (never `keep`).
    void make_room(const Entry* keep);
    const Entry* used(const Entry* e) const;
    std::vector<std::unique_ptr<Entry>> entries_;
    std::function<bool()> memory_short_;
    size_t released_for_memory_ = 0;
    std::set<uint64_t> held_anchors_;
    mutable uint64_t use_clock_ = 0;
    uint64_t next_id_ = 1;
    uint64_t next_checkpoint_id_ = 1;
};

} // namespace rw::replay
