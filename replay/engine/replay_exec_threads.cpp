// The threads of a process that execs, and a leader that ends before its
// threads. An exec ends every other thread of its process (fs/exec.c,
// de_thread: each dies with status 0 wherever it stood, inside a call it
// never returns from), and the kernel waits for those ends before it
// loads the new image: their exits come before the exec in the stream.
// A caller that did not lead its process takes the leader's id, the
// recording's and the replay's alike. A leader that ends (SYS_exit) while
// its threads run on stays a zombie that ptrace reports only once the
// last of them has ended, or not at all if one of them execs.
#include <sys/syscall.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "replayer.h"
#include "steady_now.h"

namespace rw::replay {
namespace {

// The state letter of /proc/TID/stat ('Z' for a zombie), or 0 once gone.
char thread_state(pid_t tid)
{
    std::ifstream stat("/proc/" + std::to_string(tid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return 0;
    size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : 0;
}

} // namespace

const ExecEvent* Replayer::exec_ahead(Task& t)
{
    // Between a thread's end and the exec that caused it: the ends of the
    // others (the leader's among them), and other processes' events.
    constexpr size_t kNear = 256;
    Tid leader = t.group().recorded_tgid;
    for (size_t skip = 0; skip < 2; skip++) {
        const IndexedEvent* next = source_.peek_for_task(leader, skip, kNear);
        if (!next)
            return nullptr;
        if (const auto* exec = std::get_if<ExecEvent>(&next->event))
            return exec->tgid == leader ? exec : nullptr;
        if (!std::holds_alternative<ExitEvent>(next->event))
            return nullptr;
    }
    return nullptr;
}

bool Replayer::ended_by_exec(Task& t, const ExitEvent& e)
{
    bool by_call = e.pending_nr == SYS_exit || e.pending_nr == SYS_exit_group;
    return !by_call && WIFEXITED(e.exit_code) && WEXITSTATUS(e.exit_code) == 0 && exec_ahead(t);
}

std::vector<Task*> Replayer::siblings_ended_by_exec(Task& caller)
{
    std::vector<Task*> ended;
    for (Task* other : caller.group().tasks)
        if (other != &caller && other->at != Task::At::Gone)
            ended.push_back(other);
    // The leader, if another thread execs: the kernel drops it without a
    // word to the tracer (its id goes to the caller), so nothing is
    // waited for; what is pending of it must not be taken for the caller's.
    auto leader = std::find_if(ended.begin(), ended.end(), [&](Task* o) { return o->tid() == caller.group().tgid; });
    if (leader != ended.end()) {
        forget_calls_of((*leader)->recorded_tid());
        remove_task(**leader);
        ended.erase(leader);
    }
    return ended;
}

void Replayer::forget_calls_of(Tid recorded)
{
    in_sync_call_.erase(recorded);
    std::erase_if(parked_, [&](const ParkedSleeper& p) { return p.recorded_tid == recorded; });
}

StopInfo Replayer::wait_exec_stop(Task& caller, const ExecEvent& e)
{
    std::string what = "the new image of execve(\"" + e.filename + "\")";
    pid_t leader = caller.group().tgid;
    if (caller.tid() == leader)
        return wait_stop(caller, what);
    // The image's stop comes under the leader's id; a failed call's return
    // under the caller's own.
    auto watchdog = steady_now() + options_.watchdog;
    for (;;) {
        if (waiter_.has_pending(caller.tid()))
            return wait_stop(caller, what);
        if (auto s = waiter_.wait_for(leader, std::chrono::milliseconds(10))) {
            waiter_.put_back(leader, *s);
            break;
        }
        if (steady_now() > watchdog)
            report_stuck(caller, what);
    }
    pid_t own = caller.tid();
    auto node = tasks_.extract(caller.recorded_tid());
    if (auto old = tasks_.extract(e.tid))
        retired_.push_back(std::move(old.mapped()));
    caller.take_leader_id(leader, e.tid);
    node.key() = e.tid;
    tasks_.insert(std::move(node));
    waiter_.forget(own);
    // A leader that had ended before (a zombie) lives on as the caller.
    finished_.erase(e.tid);
    zombie_leaders_.erase(e.tid);
    return wait_stop(caller, what);
}

void Replayer::collect_ended_by_exec(const std::vector<Task*>& ended, const ExecEvent& e)
{
    auto watchdog = steady_now() + options_.watchdog;
    for (Task* t : ended) {
        Tid recorded = t->recorded_tid();
        forget_calls_of(recorded);
        for (;;) {
            // Whatever stop of its came before the kill, then its end.
            auto s = waiter_.wait_until(t->tid(), watchdog);
            if (!s)
                report_stuck(*t, "its end, which the exec of " + e.filename + " causes");
            if (s->kind == StopInfo::Kind::Exited || s->kind == StopInfo::Kind::Signaled) {
                t->final_status = s;
                finished_[recorded] = *s;
                remove_task(*t);
                break;
            }
        }
    }
}

bool Replayer::leaves_threads_behind(Task& t, const ExitEvent& e)
{
    if (e.pending_nr != SYS_exit || WIFSIGNALED(e.exit_code) || t.tid() != t.group().tgid)
        return false;
    return std::any_of(t.group().tasks.begin(), t.group().tasks.end(),
                       [&](Task* o) { return o != &t && o->at != Task::At::Gone; });
}

void Replayer::end_as_zombie(Task& t, const ExitEvent& e)
{
    SyscallEvent call;
    call.nr = e.pending_nr;
    call.args = e.pending_args;
    run_to_syscall_entry(t, call, Resume::Syscall);
    resume(t, Resume::Cont);
    auto watchdog = steady_now() + options_.watchdog;
    while (thread_state(t.tid()) != 'Z') {
        // Any stop on the way is a divergence (the recording saw it end).
        if (waiter_.has_pending(t.tid())) {
            StopInfo s = wait_stop(t, "its exit");
            if (s.kind != StopInfo::Kind::Exited && s.kind != StopInfo::Kind::Signaled)
                diverge(t, "expected the thread to exit, got " + describe_stop(t, s));
            return;
        }
        if (steady_now() > watchdog)
            report_stuck(t, "its exit");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    // How the process ends is the leader's to report, when its last thread
    // does (collect_zombie_leader); the recording's word stands till then.
    t.final_status = StopInfo{};
    t.final_status->kind = StopInfo::Kind::Exited;
    t.final_status->exit_code = WEXITSTATUS(e.exit_code);
    finished_[t.recorded_tid()] = *t.final_status;
    zombie_leaders_[t.recorded_tid()] = t.tid();
    remove_task(t);
}

void Replayer::collect_zombie_leader(Task& last)
{
    auto it = zombie_leaders_.find(last.group().recorded_tgid);
    if (it == zombie_leaders_.end() || it->second == last.tid())
        return;
    pid_t leader = it->second;
    Tid recorded = it->first;
    zombie_leaders_.erase(it);
    auto watchdog = steady_now() + options_.watchdog;
    auto s = waiter_.wait_until(leader, watchdog);
    while (s && s->kind != StopInfo::Kind::Exited && s->kind != StopInfo::Kind::Signaled)
        s = waiter_.wait_until(leader, watchdog);
    if (!s)
        throw ReplayError(ReplayErrorKind::Stuck, current_, recorded,
                          "process " + std::to_string(recorded) + " did not end with its last thread");
    finished_[recorded] = *s;
}

} // namespace rw::replay
