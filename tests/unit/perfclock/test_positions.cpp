#include <doctest/doctest.h>

#include <vector>

#include "position.h"
#include "time_split.h"

using namespace rw;
using namespace rw::perfclock;

TEST_CASE("positions: order by boundary, then by paths that extend each other")
{
    Position a{10, {}};
    Position b = a.with(Segment::brk(0x400000, 3));
    Position c = b.with(Segment::step(2));
    Position d = c.with(Segment::step(3)); // steps merge
    REQUIRE(d.path.size() == 2);
    CHECK(d.path[1].count == 5);
    CHECK(a.strictly_before(b));
    CHECK(b.strictly_before(c));
    CHECK(c.strictly_before(d));
    CHECK(d.at_or_before(d));
    CHECK_FALSE(d.strictly_before(d));
    CHECK_FALSE(d.at_or_before(c));
    Position other = a.with(Segment::brk(0x400100, 1)); // same boundary, another path: no order known
    CHECK_FALSE(other.at_or_before(b));
    CHECK_FALSE(b.at_or_before(other));
    CHECK(Position{9, {Segment::step(100)}}.strictly_before(a));
    CHECK(d.parent() == b);
    CHECK(a.parent() == a);
}

TEST_CASE("Position: serialized form round-trips and rejects malformed text")
{
    Position p{38, {}};
    p.extend(Segment::brk(0x5555555551d0, 3));
    p.extend(Segment::step(17));
    p.extend(Segment::watch(0x555555558040, 8, 1, 2));
    p.extend(Segment::to_event());
    CHECK(p.serialize() == "38:b5555555551d0x3/s17/w555555558040.8.1x2/e");
    auto back = Position::parse(p.serialize());
    REQUIRE(back.has_value());
    CHECK(*back == p);
    CHECK(Position::parse("12") == Position{12, {}});
    for (const char* bad : {"", "x", "12:", "12:q", "12:b10x0", "12:s", "12:w10.8.3x1", "12:b10x1/", "-1"})
        CHECK_FALSE(Position::parse(bad).has_value());
}

TEST_CASE("split_by_time halves the recorded time, else the events")
{
    // Syscalls of process 1 (thread 1 unless given), with their thread's
    // running time at exit; other processes' events between.
    struct Call {
        uint64_t time;
        rw::Tid tid = 1, tgid = 1;
    };
    auto times_of = [](std::vector<Call> calls, rw::Tid process = 1, bool from_zero = true) {
        size_t i = 0;
        return RunningTimes(
            [&](rw::Event& e) {
                if (i == calls.size())
                    return false;
                rw::SyscallEvent s;
                s.exit_time = calls[i].time;
                s.tid = calls[i].tid;
                s.tgid = calls[i].tgid;
                e = s;
                i++;
                return true;
            },
            process, from_zero);
    };
    // Forty startup syscalls in one unit, then a long computation, then ten.
    std::vector<Call> calls(40, Call{1});
    for (uint64_t i = 0; i < 10; i++)
        calls.push_back(Call{300 + i});
    RunningTimes t = times_of(calls);
    // Position 41 follows event 40, the first syscall after the computation:
    // the split puts the computation on the left, and the next split (the
    // change in it) isolates its stretch, 40..41.
    CHECK(split_by_time(0, 49, t) == 41);
    CHECK(split_by_time(0, 41, t) == 40);
    CHECK(split_by_time(40, 49, t) == 41);
    bool by_time = false;
    double share = 0;
    CHECK(split_by_time(0, 49, t, &by_time, &share) == 41);
    CHECK(by_time);
    // The computation is nearly all of the time up to 49 (299 of 307 units),
    // so a look back from the end finds no other point.
    CHECK(share == doctest::Approx(299.0 / 307.0));
    // No running time between any two: the middle index, and it says so.
    CHECK(split_by_time(0, 40, times_of(std::vector<Call>(41, Call{1})), &by_time, &share) == 20);
    CHECK_FALSE(by_time);
    CHECK(share == 0.5);
    // Other processes' calls add nothing: a child that runs while the
    // parent waits. Here the parent computes (10 units), then its child
    // runs for 1,000, then the parent computes 10 more: the middle of the
    // parent's time is where its first computation ends.
    std::vector<Call> shell{{1}, {11}};
    for (int i = 0; i < 20; i++)
        shell.push_back(Call{1 + 50 * static_cast<uint64_t>(i), 2, 2});
    shell.push_back(Call{21});
    CHECK(split_by_time(0, 23, times_of(shell)) == 2);
    // Threads of one process add up, each from its own clock.
    RunningTimes two = times_of({{1, 1}, {1, 2}, {5, 2}, {9, 2}, {5, 1}});
    CHECK(two.at(5) == 12);
    CHECK(two.at(3) == 4);
    // Older recordings carry wall-clock jiffies: a thread's first call
    // adds nothing (its clock did not start at 0).
    RunningTimes old = times_of({{5000}, {5004}, {5010}}, 1, false);
    CHECK(old.at(3) == 10);
    // Always strictly inside.
    std::vector<Call> late(10, Call{1});
    late[9].time = 1000;
    uint64_t m = split_by_time(0, 9, times_of(late));
    CHECK(m > 0);
    CHECK(m < 9);
}
