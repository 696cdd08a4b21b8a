#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "launcher.h"

TEST_CASE("a child whose preparation failed is released without SIGPIPE, and says why")
{
    // SIGPIPE at its default would end this test process, as it ended
    // rewind replay when the child exited before the go byte was written.
    struct sigaction dfl = {}, old = {};
    dfl.sa_handler = SIG_DFL;
    sigaction(SIGPIPE, &dfl, &old);
    {
        rw::Launcher launcher("/bin/true", {"true"}, {}, rw::SignalState{},
                              [] { return std::string("the directory is gone"); });
        int status = 0;
        REQUIRE(waitpid(launcher.pid(), &status, 0) == launcher.pid());
        CHECK(launcher.release() == "the directory is gone");
    }
    sigaction(SIGPIPE, &old, nullptr);
}

TEST_CASE("a prepared child is released and runs its program")
{
    rw::Launcher launcher("/bin/true", {"true"}, {}, rw::SignalState{}, [] { return std::string(); });
    CHECK(launcher.release().empty());
    int status = -1;
    REQUIRE(waitpid(launcher.pid(), &status, 0) == launcher.pid());
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}
