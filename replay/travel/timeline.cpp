#include "timeline.h"

#include <algorithm>
#include <bit>

#include "debug_log.h"
#include "memory_headroom.h"

namespace rw::replay {

Timeline::Timeline(std::function<bool()> memory_short)
    : memory_short_(memory_short ? std::move(memory_short) : std::function<bool()>([] { return memory_is_short(); }))
{}

const Timeline::Entry* Timeline::used(const Entry* e) const
{
    if (e)
        e->last_used = ++use_clock_;
    return e;
}

const Timeline::Entry& Timeline::add(Kind kind, perfclock::Position pos, std::unique_ptr<ReplaySnapshot> snapshot,
                                     std::string note)
{
    auto e = std::make_unique<Entry>();
    e->id = kind == Kind::Checkpoint ? next_checkpoint_id_++ : next_id_++;
    e->kind = kind;
    e->pos = std::move(pos);
    e->snapshot = std::move(snapshot);
    e->note = std::move(note);
    const Entry& ref = *e;
    used(&ref);
    entries_.push_back(std::move(e));
    thin();
    make_room(&ref);
    return ref;
}

const Timeline::Entry& Timeline::add_anchor(uint64_t event, uint32_t run, uint64_t ordinal,
                                            std::unique_ptr<ReplaySnapshot> snapshot)
{
    // Held until the tool says which it still needs: it has not seen it yet.
    held_anchors_.insert(next_id_);
    perfclock::Position pos{event, {perfclock::Segment::anchor(next_id_, run, ordinal)}};
    return add(Kind::Anchor, std::move(pos), std::move(snapshot));
}

const Timeline::Entry* Timeline::anchor(const perfclock::Segment& s) const
{
    for (const auto& e : entries_)
        if (e->kind == Kind::Anchor && e->id == s.addr)
            return used(e.get());
    return nullptr;
}

void Timeline::make_room(const Entry* keep)
{
    while (memory_short_()) {
        // Snapshots at boundaries and stops first: their positions can be
        // reached again from an earlier one. An anchor's cannot (it was
        // taken where an alarm happened to stop the thread): those a tool
        // holds go last.
        enum Tier { Reachable, Anchor, HeldAnchor };
        auto tier = [&](const Entry& e) -> std::optional<Tier> {
            if (e.kind == Kind::Boundary || e.kind == Kind::Stop)
                return Reachable;
            if (e.kind == Kind::Anchor)
                return held_anchors_.count(e.id) ? HeldAnchor : Anchor;
            return std::nullopt;
        };
        const Entry* victim = nullptr;
        for (Tier wanted : {Reachable, Anchor, HeldAnchor}) {
            for (const auto& e : entries_)
                if (e.get() != keep && tier(*e) == wanted && (!victim || e->last_used < victim->last_used))
                    victim = e.get();
            if (victim)
                break;
        }
        if (!victim) {
            debug_log("timeline: memory is short, and no snapshot is left to let go");
            return;
        }
        std::vector<pid_t> pids;
        if (victim->snapshot)
            for (const auto& t : victim->snapshot->tasks)
                if (t.pid)
                    pids.push_back(t.pid);
        debug_log("timeline: memory is short: the snapshot at %s goes", victim->pos.describe().c_str());
        remove(victim);
        released_for_memory_++;
        wait_until_released(pids, std::chrono::seconds(2));
    }
}

void Timeline::thin()
{
    // Boundary snapshots: one per power-of-two distance behind the newest.
    uint64_t newest = 0;
    for (const auto& e : entries_)
        if (e->kind == Kind::Boundary)
            newest = std::max(newest, e->pos.event);
    std::vector<std::pair<uint64_t, Entry*>> boundary;
    for (const auto& e : entries_)
        if (e->kind == Kind::Boundary)
            boundary.push_back({e->pos.event, e.get()});
    std::sort(boundary.begin(), boundary.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<const Entry*> doomed;
    int last_bucket = -1;
    for (const auto& [event, e] : boundary) {
        int bucket = std::bit_width(newest - event + 1);
        if (bucket == last_bucket)
            doomed.push_back(e);
        last_bucket = bucket;
    }
    // Stop snapshots: the most recent ones.
    std::vector<const Entry*> stops;
    for (const auto& e : entries_)
        if (e->kind == Kind::Stop)
            stops.push_back(e.get());
    if (stops.size() > kStopSnapshotsKept)
        doomed.insert(doomed.end(), stops.begin(), stops.end() - kStopSnapshotsKept);
    std::vector<const Entry*> anchors;
    for (const auto& e : entries_)
        if (e->kind == Kind::Anchor)
            anchors.push_back(e.get());
    if (anchors.size() > kAnchorsKept)
        doomed.insert(doomed.end(), anchors.begin(), anchors.end() - kAnchorsKept);
    entries_.erase(
        std::remove_if(entries_.begin(), entries_.end(),
                       [&](const auto& e) { return std::find(doomed.begin(), doomed.end(), e.get()) != doomed.end(); }),
        entries_.end());
}

namespace {

// Later in the timeline: known to be after, or else a later boundary or a
// longer path at the same one.
bool later(const perfclock::Position& a, const perfclock::Position& b)
{
    if (b.strictly_before(a))
        return true;
    if (a.at_or_before(b))
        return false;
    if (a.event != b.event)
        return a.event > b.event;
    return a.path.size() > b.path.size();
}

} // namespace

const Timeline::Entry* Timeline::best_for(const perfclock::Position& target) const
{
    const Entry* best = nullptr;
    for (const auto& e : entries_)
        if (e->pos.at_or_before(target) && (!best || later(e->pos, best->pos)))
            best = e.get();
    return used(best);
}

const Timeline::Entry* Timeline::strictly_before(const perfclock::Position& pos) const
{
    const Entry* best = nullptr;
    for (const auto& e : entries_)
        if (e->pos.strictly_before(pos) && (!best || later(e->pos, best->pos)))
            best = e.get();
    return used(best);
}

const Timeline::Entry* Timeline::find_checkpoint(uint64_t id) const
{
    for (const auto& e : entries_)
        if (e->id == id && e->kind == Kind::Checkpoint)
            return e.get();
    return nullptr;
}

bool Timeline::has_at(const perfclock::Position& pos) const
{
    return std::any_of(entries_.begin(), entries_.end(), [&](const auto& e) { return e->pos == pos; });
}

std::vector<const Timeline::Entry*> Timeline::checkpoints() const
{
    std::vector<const Entry*> out;
    for (const auto& e : entries_)
        if (e->kind == Kind::Checkpoint)
            out.push_back(e.get());
    return out;
}

void Timeline::remove(const Entry* entry)
{
    entries_.erase(std::remove_if(entries_.begin(), entries_.end(), [&](const auto& e) { return e.get() == entry; }),
                   entries_.end());
}

bool Timeline::remove_checkpoint(uint64_t id)
{
    auto it = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& e) { return e->id == id && e->kind == Kind::Checkpoint; });
    if (it == entries_.end())
        return false;
    entries_.erase(it);
    return true;
}

} // namespace rw::replay
