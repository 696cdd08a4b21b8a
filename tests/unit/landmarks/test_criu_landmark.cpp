#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <filesystem>
#include <fstream>

#include "criu_landmark.h"

using namespace rw::replay;

TEST_CASE("CRIU versions: landmarks need 4.1")
{
    CHECK(version_at_least("4.1.1", 4, 1));
    CHECK(version_at_least("4.2", 4, 1));
    CHECK(version_at_least("5.0", 4, 1));
    CHECK_FALSE(version_at_least("4.0", 4, 1));
    CHECK_FALSE(version_at_least("3.17.1", 4, 1));
    CHECK_FALSE(version_at_least("", 4, 1));
}

TEST_CASE("a landmark's description: pid, threads and descriptors")
{
    char tmpl[] = "/tmp/rewind-landmark-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    CHECK_THROWS_WITH_AS(read_landmark(dir), doctest::Contains("holds no landmark"), std::runtime_error);
    {
        std::ofstream out(dir / "landmark.txt");
        out << "pid 4242\ntid 4242\ntid 4250\nfd 0 /dev/null\nfd 1 pipe:[123]\nfd 3 /tmp/a file\n";
    }
    std::ofstream(dir / "pages-1.img") << "0123456789";
    LandmarkImage image = read_landmark(dir);
    CHECK(image.pid == 4242);
    CHECK(image.tids == std::vector<pid_t>{4242, 4250});
    CHECK(image.fds.at(1) == "pipe:[123]");
    CHECK(image.fds.at(3) == "/tmp/a file");
    CHECK(image.bytes == 10);
    std::filesystem::remove_all(dir);
}

TEST_CASE("restoring from a directory without a landmark says so")
{
    char tmpl[] = "/tmp/rewind-landmark-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    CHECK_THROWS_WITH_AS(RestoredLandmark::restore("/bin/true", dir, {}, 0), doctest::Contains("holds no landmark"),
                         std::runtime_error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a landmark is refused inside a system call, and the thread stays seized")
{
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    REQUIRE(child > 0);
    REQUIRE(ptrace(PTRACE_SEIZE, child, nullptr, PTRACE_O_EXITKILL) == 0);
    int status = 0;
    // Interrupted while it waits in pause(): orig_rax is the system call.
    for (int i = 0; i < 100; i++) {
        REQUIRE(ptrace(PTRACE_INTERRUPT, child, nullptr, nullptr) == 0);
        REQUIRE(waitpid(child, &status, __WALL) == child);
        user_regs_struct regs{};
        REQUIRE(ptrace(PTRACE_GETREGS, child, nullptr, &regs) == 0);
        if (static_cast<long long>(regs.orig_rax) != -1)
            break;
        REQUIRE(ptrace(PTRACE_CONT, child, nullptr, nullptr) == 0);
        usleep(1000);
    }
    char tmpl[] = "/tmp/rewind-landmark-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    CHECK_THROWS_WITH_AS(dump_landmark("/bin/true", child, {child}, dir, 0), doctest::Contains("inside system call"),
                         std::runtime_error);
    user_regs_struct regs{};
    CHECK(ptrace(PTRACE_GETREGS, child, nullptr, &regs) == 0); // still ours, still stopped
    kill(child, SIGKILL);
    waitpid(child, &status, __WALL);
    std::filesystem::remove_all(dir);
}
