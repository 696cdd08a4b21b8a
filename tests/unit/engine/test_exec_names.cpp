// How the kernel names what an exec loads, and what a replay can recreate.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/syscall.h>

#include "exec_names.h"

using namespace rw::replay;

TEST_CASE("an exec is named by its path, or by the descriptor it goes through")
{
    CHECK(exec_name(SYS_execve, 0, "./prog", 0) == "./prog");
    CHECK(exec_name(SYS_execveat, AT_FDCWD, "prog", 0) == "prog");
    CHECK(exec_name(SYS_execveat, 7, "/usr/bin/env", 0) == "/usr/bin/env");
    CHECK(exec_name(SYS_execveat, 7, "bin/env", 0) == "/dev/fd/7/bin/env");
    CHECK(exec_name(SYS_execveat, 3, "", AT_EMPTY_PATH) == "/dev/fd/3");
    CHECK_FALSE(exec_name(SYS_execveat, 3, "", 0));
}

TEST_CASE("descriptor routes")
{
    auto r = descriptor_route("/dev/fd/3");
    REQUIRE(r);
    CHECK(r->fd == 3);
    CHECK(r->rest.empty());
    r = descriptor_route("/dev/fd/12/bin/env");
    REQUIRE(r);
    CHECK(r->fd == 12);
    CHECK(r->rest == "bin/env");
    r = descriptor_route("/proc/self/fd/4");
    REQUIRE(r);
    CHECK(r->fd == 4);
    CHECK(descriptor_route("/proc/thread-self/fd/5"));
    CHECK_FALSE(descriptor_route("/dev/fd/"));
    CHECK_FALSE(descriptor_route("/dev/fd/3x"));
    CHECK_FALSE(descriptor_route("/dev/fdx/3"));
    CHECK_FALSE(descriptor_route("/proc/1/fd/3"));
    CHECK_FALSE(descriptor_route("prog"));
}

TEST_CASE("files a bind mount cannot recreate")
{
    CHECK(memfd_name("/memfd:jit code (deleted)") == "jit code");
    CHECK_FALSE(memfd_name("/memfd:x"));
    CHECK_FALSE(bind_mountable("/memfd:x (deleted)"));
    CHECK_FALSE(bind_mountable("/"));
    CHECK_FALSE(bind_mountable("[heap]"));
    CHECK(bind_mountable("/tmp/prog (deleted)"));
    CHECK(live_path("/tmp/prog (deleted)") == "/tmp/prog");
    CHECK(live_path("/usr/bin/env") == "/usr/bin/env");
}

TEST_CASE("the directory a relative exec reached its program from")
{
    CHECK(directory_reaching("./prog", "/opt/x/prog") == "/opt/x");
    CHECK(directory_reaching("x/prog", "/opt/x/prog") == "/opt");
    CHECK(directory_reaching("bin//prog", "/usr/bin/prog") == "/usr");
    CHECK_FALSE(directory_reaching("../prog", "/opt/prog"));
    CHECK_FALSE(directory_reaching("other", "/opt/prog"));
    CHECK_FALSE(directory_reaching("prog", "prog"));
    CHECK_FALSE(directory_reaching("/opt/prog", "/opt/prog"));
    CHECK_FALSE(directory_reaching(".", "/opt/prog"));
}
