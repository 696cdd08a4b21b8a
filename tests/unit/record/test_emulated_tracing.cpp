// Which tracee's stop a recorded tracer's wait reports (emulated_tracing.h).
#include <doctest/doctest.h>

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <linux/wait.h>

#include "emulated_tracing.h"

using namespace rw;

namespace {

// Tracer thread 10 (process 10) traces 20 and 30, seized 30; thread 11 of
// the same process traces 40; process 50 traces 60.
EmulatedTracing tracing_of_two_processes()
{
    EmulatedTracing t;
    auto add = [&](Tid tid, Tid tracer, Tid tracer_tgid, bool seized) {
        EmulatedTracee e;
        e.tid = e.tgid = tid;
        e.tracer = tracer;
        e.tracer_tgid = tracer_tgid;
        e.seized = seized;
        t.add(e);
    };
    add(20, 10, 10, false);
    add(30, 10, 10, true);
    add(40, 11, 10, false);
    add(60, 50, 50, false);
    return t;
}

void stop(EmulatedTracing& t, Tid tid, int status)
{
    EmulatedStop s;
    s.status = status;
    t.find(tid)->stop = s;
}

pid_t group_of(Tid tid)
{
    return tid == 30 ? 300 : 100;
}

} // namespace

TEST_CASE("the stop statuses are the kernel's")
{
    int s = signal_stop_status(SIGSTOP);
    int event = s >> 16;
    CHECK((WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP && event == 0));
    CHECK(group_stop_status(SIGSTOP, false) == s);
    int seized = group_stop_status(SIGSTOP, true);
    int seized_event = seized >> 16;
    CHECK((WIFSTOPPED(seized) && WSTOPSIG(seized) == SIGSTOP && seized_event == PTRACE_EVENT_STOP));
    int exit = event_stop_status(PTRACE_EVENT_EXIT);
    int code = exit >> 8;
    CHECK(code == (SIGTRAP | (PTRACE_EVENT_EXIT << 8)));
}

TEST_CASE("a wait reports only stops of its own process's tracees, once")
{
    EmulatedTracing t = tracing_of_two_processes();
    WaitSelector any = wait4_selector(-1, 0, 100);
    CHECK(t.reportable(any, 10, 10, group_of) == nullptr); // nothing stopped
    stop(t, 60, signal_stop_status(SIGSTOP));
    CHECK(t.reportable(any, 10, 10, group_of) == nullptr); // process 50's tracee
    CHECK(t.reportable(any, 50, 50, group_of)->tid == 60);
    stop(t, 40, signal_stop_status(SIGUSR1));
    // Any thread of the tracer's process, unless __WNOTHREAD.
    CHECK(t.reportable(any, 10, 10, group_of)->tid == 40);
    CHECK(t.reportable(wait4_selector(-1, __WNOTHREAD, 100), 10, 10, group_of) == nullptr);
    CHECK(t.reportable(wait4_selector(-1, __WNOTHREAD, 100), 11, 10, group_of)->tid == 40);
    t.find(40)->stop->reported = true;
    CHECK(t.reportable(any, 10, 10, group_of) == nullptr);
}

TEST_CASE("wait4's pid and waitid's idtype select a tracee, its process group, or any")
{
    EmulatedTracing t = tracing_of_two_processes();
    stop(t, 20, signal_stop_status(SIGSTOP));
    stop(t, 30, group_stop_status(SIGSTOP, true));
    CHECK(t.reportable(wait4_selector(30, 0, 100), 10, 10, group_of)->tid == 30);
    CHECK(t.reportable(wait4_selector(-300, 0, 100), 10, 10, group_of)->tid == 30);
    CHECK(t.reportable(wait4_selector(0, 0, 100), 10, 10, group_of)->tid == 20); // the caller's group
    CHECK(t.reportable(wait4_selector(0, 0, 999), 10, 10, group_of) == nullptr);
    CHECK(t.reportable(wait4_selector(21, 0, 100), 10, 10, group_of) == nullptr);
    CHECK(wait4_selector(-1, WNOHANG, 100).no_hang);

    auto by_pid = waitid_selector(P_PID, 30, WSTOPPED | WNOWAIT, 100);
    REQUIRE(by_pid);
    CHECK(!by_pid->consume);
    CHECK(t.reportable(*by_pid, 10, 10, group_of)->tid == 30);
    auto by_group = waitid_selector(P_PGID, 0, WEXITED, 300);
    REQUIRE(by_group);
    CHECK(t.reportable(*by_group, 10, 10, group_of)->tid == 30);
    CHECK(waitid_selector(P_ALL, 0, WEXITED, 100)->which == WaitSelector::Which::Any);
    // A pidfd is the kernel's to resolve.
    CHECK(!waitid_selector(P_PIDFD, 3, WEXITED, 100));
}

TEST_CASE("a tracer's tracees are those of its thread; a tracee leaves when erased")
{
    EmulatedTracing t = tracing_of_two_processes();
    CHECK(t.tracees_of(10) == std::vector<Tid>{20, 30});
    CHECK(t.tracees_of(11) == std::vector<Tid>{40});
    CHECK(t.is_tracer(10));
    CHECK(!t.is_tracer(20));
    t.erase(60);
    CHECK(!t.is_tracer(50));
    CHECK(t.find(60) == nullptr);
}
