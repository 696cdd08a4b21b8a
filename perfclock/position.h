// A point of the replayed execution, exactly. Without hardware performance
// counters, progress inside the stretch between two events is measured by
// what can be counted exactly and reproduced: executions of an instruction
// address (hardware breakpoint counters), triggers of a data watchpoint,
// single steps. A position is the event boundary it follows plus the path
// of such segments that leads from that boundary to it, each segment
// counted from where the previous one ended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rw::perfclock {

struct Segment {
    enum class Kind : uint8_t {
        Break,   // until the count-th execution of `addr`
        Step,    // count single steps
        Watch,   // until the count-th trigger of a watchpoint on [addr, addr+len)
        ToEvent, // until the task reaches its next event (a signal about to be delivered)
        Anchor,  // the state of snapshot `addr` of this session, taken at an interrupt (first in a path)
    };
    Kind kind = Kind::Break;
    uint64_t addr = 0;
    uint32_t len = 0;
    uint8_t access = 0; // Watch: 1 write, 2 read/write
    uint64_t count = 0;

    static Segment brk(uint64_t addr, uint64_t count) { return {Kind::Break, addr, 0, 0, count}; }
    static Segment step(uint64_t count) { return {Kind::Step, 0, 0, 0, count}; }
    static Segment watch(uint64_t addr, uint32_t len, uint8_t access, uint64_t count)
    {
        return {Kind::Watch, addr, len, access, count};
    }
    static Segment to_event() { return {Kind::ToEvent, 0, 0, 0, 1}; }
    // Anchors of one sampling run (`run`) are ordered by `ordinal`.
    static Segment anchor(uint64_t snapshot, uint32_t run, uint64_t ordinal)
    {
        return {Kind::Anchor, snapshot, run, 0, ordinal};
    }
    bool operator==(const Segment&) const = default;
};

struct Position {
    uint64_t event = 0;        // events replayed: the boundary this position follows
    std::vector<Segment> path; // from that boundary

    bool operator==(const Position& other) const = default;
    // Known to come no later than `other`: an earlier boundary, or the same
    // boundary and a path that `other` continues (or an anchor of the same
    // sampling run taken no later).
    bool at_or_before(const Position& other) const;
    bool strictly_before(const Position& other) const { return at_or_before(other) && !(*this == other); }
    // Appends a segment, merging consecutive single steps.
    void extend(const Segment& s);
    Position with(const Segment& s) const
    {
        Position p = *this;
        p.extend(s);
        return p;
    }
    // The position with its last segment removed (a boundary stays itself).
    Position parent() const;
    std::string describe() const;
    // Whether it names a snapshot of this session (it means nothing elsewhere).
    bool anchored() const { return !path.empty() && path[0].kind == Segment::Kind::Anchor; }

    // A compact text form that names the position exactly, for tools and
    // command lines: "38", "38:b5555555551d0x3/s17", "12:w555555558040.8.1x2/e".
    std::string serialize() const;
    static std::optional<Position> parse(const std::string& text);
};

} // namespace rw::perfclock
