// LinkReleaser closes what it is given, with at most kMaxWorkers threads,
// and finish() waits for every close.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/eventfd.h>

#include <vector>

#include "link_releaser.h"

using rw::LinkReleaser;
using rw::UniqueFd;

namespace {

std::vector<UniqueFd> descriptors(size_t n, std::vector<int>& numbers)
{
    std::vector<UniqueFd> fds;
    for (size_t i = 0; i < n; i++) {
        fds.emplace_back(::eventfd(0, EFD_CLOEXEC));
        REQUIRE(fds.back().get() >= 0);
        numbers.push_back(fds.back().get());
    }
    return fds;
}

bool is_open(int fd)
{
    return ::fcntl(fd, F_GETFD) != -1;
}

} // namespace

TEST_CASE("LinkReleaser: every descriptor released is closed once finish() returns")
{
    LinkReleaser releaser;
    std::vector<int> numbers;
    releaser.release(descriptors(3, numbers));
    releaser.release(descriptors(197, numbers));
    releaser.release({});
    releaser.finish();
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
    CHECK(releaser.workers() >= 1);
    CHECK(releaser.workers() <= LinkReleaser::kMaxWorkers);

    // It can be used again after finish(), with the workers it has.
    size_t workers = releaser.workers();
    numbers.clear();
    releaser.release(descriptors(2, numbers));
    releaser.finish();
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
    CHECK(releaser.workers() <= std::max<size_t>(workers, 2));
}

TEST_CASE("LinkReleaser: destroying it closes what is still pending")
{
    std::vector<int> numbers;
    {
        LinkReleaser releaser;
        releaser.release(descriptors(50, numbers));
    }
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
}
