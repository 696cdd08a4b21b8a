// The timeline lets snapshots go while memory is short: the thinnable ones
// used least recently first, never the beginning, a checkpoint, a landmark
// or the one just taken.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <utility>

#include "memory_headroom.h"
#include "timeline.h"

using namespace rw::perfclock;
using namespace rw::replay;

namespace {

std::vector<uint64_t> events_kept(const Timeline& t, uint64_t last)
{
    std::vector<uint64_t> kept;
    for (uint64_t event = 0; event <= last; event++)
        if (t.has_at(Position{event, {}}))
            kept.push_back(event);
    return kept;
}

} // namespace

TEST_CASE("timeline: while memory is short, the least recently used snapshots go")
{
    int short_for = 0; // how many more times memory is reported short
    Timeline t([&] { return short_for > 0 && short_for--; });
    t.add(Timeline::Kind::Beginning, Position{0, {}}, nullptr);
    t.add(Timeline::Kind::Checkpoint, Position{1, {}}, nullptr);
    t.add(Timeline::Kind::Landmark, Position{2, {}}, nullptr);
    for (uint64_t event : {3, 4, 5, 6})
        t.add(Timeline::Kind::Stop, Position{event, {}}, nullptr);
    CHECK(t.released_for_memory() == 0);
    CHECK(events_kept(t, 9) == std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 6});

    // A restore chose the stop at 3: it is now the most recently used.
    REQUIRE(t.best_for(Position{3, {}})->pos.event == 3);
    short_for = 2;
    t.add(Timeline::Kind::Stop, Position{7, {}}, nullptr);
    CHECK(t.released_for_memory() == 2);
    CHECK(events_kept(t, 9) == std::vector<uint64_t>{0, 1, 2, 3, 6, 7});

    // Short for longer than there are thinnable snapshots: the new one stays.
    short_for = 100;
    t.add(Timeline::Kind::Stop, Position{8, {}}, nullptr);
    CHECK(events_kept(t, 9) == std::vector<uint64_t>{0, 1, 2, 8});
    CHECK(t.released_for_memory() == 5);
}

TEST_CASE("timeline: anchors go after the snapshots whose positions can be reached again")
{
    bool short_once = false;
    Timeline t([&] { return std::exchange(short_once, false); });
    t.add(Timeline::Kind::Beginning, Position{0, {}}, nullptr);
    const auto& anchor = t.add_anchor(5, 1, 1, nullptr);
    auto anchored = anchor.pos;
    t.add(Timeline::Kind::Boundary, Position{6, {}}, nullptr);
    REQUIRE(t.best_for(Position{6, {}})); // the boundary used last
    short_once = true;
    t.add(Timeline::Kind::Stop, Position{7, {}}, nullptr);
    CHECK(!t.has_at(Position{6, {}}));
    CHECK(t.has_at(anchored));
    short_once = true;
    t.add(Timeline::Kind::Stop, Position{8, {}}, nullptr);
    CHECK(!t.has_at(Position{7, {}}));
    CHECK(t.has_at(anchored));
}

TEST_CASE("memory headroom: read from this machine")
{
    auto h = memory_headroom();
    REQUIRE(h);
    CHECK(h->total > 0);
    CHECK(h->available <= h->total);
    CHECK(memory_is_short(MemoryHeadroom{100 << 20, uint64_t(8) << 30})); // under 256 MiB
    CHECK(!memory_is_short(MemoryHeadroom{uint64_t(2) << 30, uint64_t(8) << 30}));
    CHECK(memory_is_short(MemoryHeadroom{60 << 20, 1 << 30})); // under 64 MiB
    CHECK(memory_is_short(MemoryHeadroom{uint64_t(2) << 30, uint64_t(8) << 30}, uint64_t(2) << 30));
}

TEST_CASE("memory headroom: a process killed is waited for until its memory is freed")
{
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        pause();
        _exit(0);
    }
    kill(child, SIGKILL);
    wait_until_released({child}, std::chrono::seconds(5));
    std::string path = "/proc/" + std::to_string(child) + "/stat";
    FILE* f = fopen(path.c_str(), "r");
    REQUIRE(f);
    char buf[512] = {};
    CHECK(fread(buf, 1, sizeof buf - 1, f) > 0);
    fclose(f);
    std::string stat = buf;
    CHECK(stat[stat.rfind(')') + 2] == 'Z');
    waitpid(child, nullptr, 0);
}
