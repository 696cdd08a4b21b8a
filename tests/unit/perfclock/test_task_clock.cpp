#include <doctest/doctest.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>

#include "task_clock.h"
#include "tracee.h"

using namespace std::chrono_literals;

namespace {

constexpr int kTrapPerf = 6; // TRAP_PERF
constexpr uint64_t kTag = 0x5441'534b;

// A child that spins forever, stopped under ptrace before it starts.
struct SpinningChild {
    pid_t pid;
    SpinningChild()
    {
        pid = ::fork();
        if (pid == 0) {
            ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
            ::raise(SIGSTOP);
            volatile unsigned long spins = 0;
            for (;;)
                spins = spins + 1;
        }
        int status = 0;
        ::waitpid(pid, &status, 0);
    }
    ~SpinningChild()
    {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

} // namespace

TEST_CASE("a task clock's alarm stops the thread after it ran the time asked, and stopped time does not count")
{
    if (!rw::perfclock::task_clock_works()) {
        std::printf("SKIPPED task clock test: perf software events are not allowed here\n");
        return;
    }
    SpinningChild child;
    rw::perfclock::TaskClock clock(child.pid, 20ms, kTag);
    // Stopped, the child does not run: its clock stands still.
    std::this_thread::sleep_for(30ms);
    CHECK(clock.elapsed() < 1ms);

    auto start = std::chrono::steady_clock::now();
    REQUIRE(::ptrace(PTRACE_CONT, child.pid, nullptr, nullptr) == 0);
    int status = 0;
    REQUIRE(::waitpid(child.pid, &status, 0) == child.pid);
    auto waited = std::chrono::steady_clock::now() - start;
    REQUIRE(WIFSTOPPED(status));
    CHECK(WSTOPSIG(status) == SIGTRAP);
    siginfo_t info{};
    REQUIRE(::ptrace(PTRACE_GETSIGINFO, child.pid, nullptr, &info) == 0);
    CHECK(info.si_code == kTrapPerf);
    CHECK(rw::perf_data(info) == kTag);
    CHECK(clock.elapsed() >= 20ms);
    CHECK(clock.elapsed() < 2s);
    CHECK(waited >= 20ms);
}
