// LinkCloser closes what it is given, with at most kMaxWorkers threads,
// and finish() waits for every close.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/eventfd.h>

#include <vector>

#include "link_closer.h"

using rw::LinkCloser;
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

TEST_CASE("LinkCloser: every descriptor released is closed once finish() returns")
{
    LinkCloser closer;
    std::vector<int> numbers;
    closer.close(descriptors(3, numbers));
    closer.close(descriptors(197, numbers));
    closer.close({});
    closer.finish();
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
    CHECK(closer.workers() >= 1);
    CHECK(closer.workers() <= LinkCloser::kMaxWorkers);

    // It can be used again after finish(), with the workers it has.
    size_t workers = closer.workers();
    numbers.clear();
    closer.close(descriptors(2, numbers));
    closer.finish();
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
    CHECK(closer.workers() <= std::max<size_t>(workers, 2));
}

TEST_CASE("LinkCloser: destroying it closes what is still pending")
{
    std::vector<int> numbers;
    {
        LinkCloser closer;
        closer.close(descriptors(50, numbers));
    }
    for (int fd : numbers)
        CHECK_FALSE(is_open(fd));
}
