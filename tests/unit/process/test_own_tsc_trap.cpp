#include <doctest/doctest.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "own_tsc_trap.h"
#include "steady_now.h"
#include "tsc.h"

namespace {

int tsc_mode()
{
    int mode = 0;
    prctl(PR_GET_TSC, &mode, 0, 0, 0);
    return mode;
}

bool trap_testable()
{
    if (rw::tsc_trap_works())
        return true;
    std::printf("skipped: PR_SET_TSC does not make rdtsc fault on this machine\n");
    return false;
}

// Runs `body` on a thread of its own: the trap is a per-thread setting.
template <typename F> void on_own_thread(F body)
{
    std::thread t(body);
    t.join();
}

} // namespace

TEST_CASE("a tracer thread that traps rdtsc still reads the TSC and the clocks")
{
    if (!trap_testable())
        return;
    on_own_thread([] {
        rw::OwnRdtscTrap trap;
        REQUIRE(trap.active());
        CHECK(tsc_mode() == PR_TSC_SIGSEGV);
        uint64_t before = rw::own_rdtsc_emulated();
        uint64_t t1 = __rdtsc();
        unsigned aux = 0;
        uint64_t t2 = __rdtscp(&aux);
        CHECK(t2 > t1);
        CHECK(rw::own_rdtsc_emulated() == before + 2);
        // The vDSO's clock reads the TSC; through the handler it stays right.
        auto vdso = std::chrono::steady_clock::now();
        auto sys = rw::steady_now();
        CHECK(std::chrono::abs(sys - vdso) < std::chrono::seconds(1));
        CHECK(std::chrono::abs(rw::coarse_now() - sys) < std::chrono::milliseconds(100));
    });
    CHECK(tsc_mode() == PR_TSC_ENABLE);
}

TEST_CASE("children of a thread that traps rdtsc get a normal TSC")
{
    if (!trap_testable())
        return;
    on_own_thread([] {
        rw::OwnRdtscTrap trap;
        REQUIRE(trap.active());
        pid_t child = fork();
        if (child == 0)
            _exit(tsc_mode() == PR_TSC_ENABLE ? 0 : 1);
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        {
            rw::PlainTscForChildren plain;
            CHECK(tsc_mode() == PR_TSC_ENABLE);
        }
        CHECK(tsc_mode() == PR_TSC_SIGSEGV);
    });
}
