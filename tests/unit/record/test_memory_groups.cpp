// Which processes the recorder schedules as one because they share memory.
#include <doctest/doctest.h>

#include <algorithm>

#include "memory_groups.h"

using namespace rw;

namespace {

std::vector<Tid> sorted(std::vector<Tid> v)
{
    std::sort(v.begin(), v.end());
    return v;
}

} // namespace

TEST_CASE("a process with no shared mappings is scheduled alone, and so are its children")
{
    MemoryGroups groups;
    CHECK(groups.key_of(100) == 100);
    CHECK(groups.members(100) == std::vector<Tid>{100});
    CHECK(groups.forked(100, 101, false).empty());
    CHECK(groups.key_of(101) == 101);
}

TEST_CASE("a fork that inherits an anonymous shared mapping joins its parent in a new group")
{
    MemoryGroups groups;
    CHECK(groups.mapped_shared(100, std::nullopt).empty()); // nobody else shares it yet
    CHECK(groups.shares_memory(100));
    auto merges = groups.forked(100, 101, false);
    REQUIRE(merges.size() == 2);
    Tid key = groups.key_of(100);
    CHECK(key < 0); // a group's key never names a process
    CHECK(groups.key_of(101) == key);
    CHECK(sorted(groups.members(key)) == std::vector<Tid>{100, 101});
    for (const auto& m : merges)
        CHECK(m.into == key);

    SUBCASE("a grandchild joins the same group, and only it moves")
    {
        auto more = groups.forked(101, 102, false);
        REQUIRE(more.size() == 1);
        CHECK(more[0].from == 102);
        CHECK(more[0].into == key);
        CHECK(more[0].processes == std::vector<Tid>{102});
        CHECK(groups.members(key).size() == 3);
    }
    SUBCASE("a member that execs leaves; the group keeps its key until the last one leaves")
    {
        CHECK(groups.leave(100) == key);
        CHECK(groups.key_of(100) == 100);
        CHECK(!groups.shares_memory(100));
        CHECK(groups.members(key) == std::vector<Tid>{101});
        CHECK(groups.leave(101) == key);
        CHECK(groups.members(key) == std::vector<Tid>{key});
        CHECK(!groups.leave(101));
    }
}

TEST_CASE("a fork sharing the whole address space joins its parent without shared mappings")
{
    MemoryGroups groups;
    CHECK(groups.forked(200, 201, true).size() == 2);
    CHECK(groups.key_of(200) == groups.key_of(201));
}

TEST_CASE("unrelated processes mapping one file shared become one group")
{
    MemoryGroups groups;
    FileIdentity file{8, 1234};
    CHECK(groups.mapped_shared(300, file).empty());
    CHECK(groups.mapped_shared(400, FileIdentity{8, 999}).empty()); // another file
    auto merges = groups.mapped_shared(500, file);
    CHECK(!merges.empty());
    CHECK(groups.key_of(300) == groups.key_of(500));
    CHECK(groups.key_of(400) == 400);

    SUBCASE("two groups that come to share a file merge into one")
    {
        groups.forked(400, 401, false);
        Tid other = groups.key_of(400);
        CHECK(other != groups.key_of(300));
        auto joined = groups.mapped_shared(401, file);
        REQUIRE(joined.size() == 1); // one of the two groups moves into the other
        CHECK(groups.key_of(400) == groups.key_of(300));
        CHECK(groups.members(groups.key_of(300)).size() == 4);
    }
    SUBCASE("a process that left no longer draws newcomers into its group")
    {
        groups.leave(300);
        groups.leave(500);
        CHECK(groups.mapped_shared(600, file).empty());
        CHECK(groups.key_of(600) == 600);
    }
}
