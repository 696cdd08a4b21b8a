// LinkReleaser hands descriptors to its holder process, which closes them
// and ends after the releaser; without a holder they are closed here.
// A pipe's write end stands in for a link: its reader sees the end of file
// once every copy is closed, wherever that happens.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

#include "link_releaser.h"

using rw::LinkReleaser;
using rw::UniqueFd;

namespace {

struct Pipe {
    UniqueFd read, write;
    Pipe()
    {
        int fds[2];
        REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
        read.reset(fds[0]);
        write.reset(fds[1]);
    }
};

bool readable_within(int fd, int ms)
{
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, ms) == 1;
}

bool ends_of_file(int fd)
{
    char byte;
    return readable_within(fd, 10000) && ::read(fd, &byte, 1) == 0;
}

} // namespace

TEST_CASE("LinkReleaser: the holder closes what it is given and ends after the releaser")
{
    std::vector<Pipe> pipes(70); // more than one message's worth
    int pidfd = -1;
    {
        LinkReleaser releaser(true);
        REQUIRE_MESSAGE(releaser.holder() > 0, "the unit tests must leave no threads running");
        pidfd = static_cast<int>(::syscall(SYS_pidfd_open, releaser.holder(), 0));
        REQUIRE(pidfd >= 0);
        std::vector<UniqueFd> links;
        std::vector<int> numbers;
        for (auto& p : pipes) {
            numbers.push_back(p.write.get());
            links.push_back(std::move(p.write));
        }
        releaser.release(std::move(links));
        for (int fd : numbers)
            CHECK(::fcntl(fd, F_GETFD) == -1); // no longer this process's
        for (auto& p : pipes)
            CHECK(ends_of_file(p.read.get()));
        CHECK_FALSE(readable_within(pidfd, 0)); // still there while the releaser is
    }
    CHECK(readable_within(pidfd, 10000)); // and gone after it
    ::close(pidfd);
}

TEST_CASE("LinkReleaser: without a holder, links are closed in this process")
{
    Pipe p;
    LinkReleaser releaser(false);
    CHECK(releaser.holder() == -1);
    std::vector<UniqueFd> links;
    links.push_back(std::move(p.write));
    releaser.release(std::move(links));
    releaser.finish();
    CHECK(readable_within(p.read.get(), 0));
    CHECK(ends_of_file(p.read.get()));
}
