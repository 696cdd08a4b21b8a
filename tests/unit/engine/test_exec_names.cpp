// How the kernel names what an exec loads.
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
