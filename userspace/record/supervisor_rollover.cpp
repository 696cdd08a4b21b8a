// A start image in the middle of a recording (the flight recorder, record
// --window): the threads are stopped as for the detach, each put back out
// of any syscall it was in (its call ends interrupted in the trace and is
// made again, as the kernel restarts a call), the image is taken, and the
// recording goes on from fresh bookkeeping, as after an attach. The thread
// that had the CPU keeps it: the others run only once it gives it up, so
// the events after that point are in an order the replay can follow from
// the image as well as from any earlier point.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "attach.h"
#include "event_assembler.h"
#include "phase_times.h"
#include "supervisor.h"

namespace rw {

std::string Supervisor::why_no_rollover() const
{
    std::set<Tid> processes;
    for (const auto& [tid, t] : threads_) {
        processes.insert(t.tgid);
        if (t.listening)
            return "the process is stopped by a signal (job control)";
        if (t.answered || t.waits_for_tracees || t.holds_wait || t.step_next)
            return "the process traces another";
    }
    if (processes.size() != 1 || *processes.begin() != initial_)
        return "processes it started are running";
    if (!held_children_.empty() || !forks_seen_.empty())
        return "a process it started is starting";
    return "";
}

std::string Supervisor::roll_over()
{
    next_roll_try_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    if (std::string why = why_no_rollover(); !why.empty())
        return why;
    const Tid tgid = initial_;
    auto stopped_at = std::chrono::steady_clock::now();
    // Where the pause goes (REWIND_RECORD_STATS): stopping, taking the
    // threads out of their calls, the events so far, the copy, resuming.
    PhaseTimes times(stopped_at);
    std::optional<Tid> runner = scheduler_.running(groups_.key_of(tgid));
    Stopped all = stop_everything();
    times.ended("stop");
    std::vector<std::pair<pid_t, int>> stopped;
    bool regular = all.newcomers.empty() && all.processes.size() == 1;
    for (pid_t tid : all.threads) {
        int restarted = -1;
        if (put_before_syscall(tid, &restarted))
            stopped.push_back({tid, restarted});
        else
            regular = false; // gone: its end is still to be reported
    }
    times.ended("out of calls");
    // Every call the threads were in has ended in the stream now; a place
    // still reserved is a call that was skipped at its entry (no exit).
    drain_ring();
    times.ended("events");
    for (auto [tid, restarted] : stopped)
        assembler_.cancel_places(tid);
    std::stable_partition(stopped.begin(), stopped.end(), [&](const auto& s) { return runner && s.first == *runner; });

    std::string why;
    std::function<void(std::chrono::duration<double>)> after;
    if (!regular) {
        why = "a thread or process started or ended while the others were being stopped";
    } else {
        try {
            after = options_.roll_over(tgid, stopped);
        } catch (const std::exception& e) {
            why = e.what();
        }
    }
    times.ended("copy");
    // Fresh bookkeeping, as after an attach.
    for (Tid p : all.processes)
        unserialize(groups_.key_of(p));
    threads_.clear();
    detaching_ = false;
    std::vector<Tid> mine;
    for (auto [tid, restarted] : stopped)
        if (all.tgid_of.at(tid) == tgid)
            mine.push_back(tid);
    if (!mine.empty())
        adopt(tgid, mine);
    for (auto [tid, restarted] : stopped)
        if (all.tgid_of.at(tid) != tgid) {
            // A process forked meanwhile: it runs on as a new one would.
            Thread& t = thread(tid);
            t.started = true;
            resume(t, 0);
        }
    for (auto [tid, sig] : all.later)
        ::syscall(SYS_tgkill, all.tgid_of.count(tid) ? all.tgid_of.at(tid) : tid, tid, sig);
    times.ended("resume");
    if (std::getenv("REWIND_RECORD_STATS"))
        std::fprintf(stderr, "rewind: start image of %zu threads: %s\n", stopped.size(), times.describe().c_str());
    if (after)
        after(std::chrono::steady_clock::now() - stopped_at);
    return why;
}

} // namespace rw
