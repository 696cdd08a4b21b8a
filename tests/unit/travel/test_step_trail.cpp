// The steps a search went through, answering later steps back.
#include <doctest/doctest.h>

#include "step_trail.h"

using namespace rw::perfclock;
using namespace rw::replay;

TEST_CASE("step trail: the place before each step, named by execution counts")
{
    StepTrail trail;
    Position base{7, {}};
    // The stretch starts on 0x10, then runs 0x20 0x30 0x10 0x20 0x40.
    trail.start(base, 0x10);
    for (uint64_t rip : {0x20, 0x30, 0x10, 0x20, 0x40})
        trail.stepped(rip);
    CHECK(trail.last() == base.with(Segment::brk(0x40, 1)));
    // Before the 2nd 0x20 is the 0x10 the stretch did not start on: named by steps.
    CHECK(trail.before(base.with(Segment::brk(0x20, 2))) == base.with(Segment::step(3)));
    CHECK(trail.before(base.with(Segment::step(3))) == base.with(Segment::brk(0x30, 1)));
    CHECK(trail.before(base.with(Segment::brk(0x30, 1))) == base.with(Segment::brk(0x20, 1)));
    // Before the first step: the base.
    CHECK(trail.before(base.with(Segment::brk(0x20, 1))) == base);
    // Not on the trail: another base, a count never reached.
    CHECK_FALSE(trail.before(Position{8, {Segment::brk(0x20, 1)}}));
    CHECK_FALSE(trail.before(base.with(Segment::brk(0x20, 3))));
    trail.clear();
    CHECK_FALSE(trail.before(base.with(Segment::brk(0x30, 1))));
}

TEST_CASE("step trail: once steps were dropped, the first kept one has no known predecessor")
{
    StepTrail trail;
    Position base{1, {}};
    trail.start(base, 0x1);
    for (size_t i = 0; i < StepTrail::kMostSteps + 2; i++)
        trail.stepped(0x100 + (i % 2));
    // 65538 steps alternating 0x100, 0x101: the oldest two were dropped.
    CHECK_FALSE(trail.before(base.with(Segment::brk(0x100, 2))));
    CHECK(trail.before(base.with(Segment::brk(0x101, 2))) == base.with(Segment::brk(0x100, 2)));
}
