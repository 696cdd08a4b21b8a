#include "replayer.h"

#include "instruction_trap.h"
#include "stray_signal.h"

#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <fstream>

#include "cpu_pin.h"
#include "event_format.h"
#include "steady_now.h"
#include "text.h"
#include "trap_tags.h"

namespace rw::replay {

Replayer::Replayer(const Trace& trace, ReplayOptions options)
    : trace_(trace), options_(std::move(options)), source_(trace.events()),
      parallel_(trace.meta().thread_mode == "parallel")
{
    if (parallel_trace())
        source_.order_by_seq();
    if (trace.end()) {
        written_while_mapped_.insert(trace.end()->files_written_while_mapped.begin(),
                                     trace.end()->files_written_while_mapped.end());
        if (trace.end()->files_mapped_shared_writable)
            mapped_shared_writable_ = std::set<FileIdentity>(trace.end()->files_mapped_shared_writable->begin(),
                                                             trace.end()->files_mapped_shared_writable->end());
    }
    if (const char* v = std::getenv("REWIND_NOTIFY_SYSCALLS"); v && std::string(v) == "0")
        options_.notify_syscalls = false; // every syscall a ptrace stop (for comparisons)
    if (const char* v = std::getenv("REWIND_SYSCALL_AGENT"); v && std::string(v) == "0")
        options_.syscall_agent = false; // runs of calls served by notification alone
    // Copies of replayed processes outlive their parents: keep them ours.
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    // Before any tracee exists: they inherit it.
    if (options_.one_cpu) {
        std::string pinned = pin_replay_cpu();
        // Switching between this thread and a tracee costs no CR4 write
        // when both trap rdtsc (own_tsc_trap.h).
        own_rdtsc_trap_.emplace();
        if (std::getenv("REWIND_DEBUG"))
            std::fprintf(stderr, "[replay] %s; rdtsc %s in the tracer\n", pinned.c_str(),
                         own_rdtsc_trap_->active() ? "trapped" : "not trapped");
    }
}

Replayer::~Replayer()
{
    if (std::getenv("REWIND_DEBUG"))
        std::fprintf(stderr,
                     "[replay] %llu of %llu emulated syscalls served by seccomp notification, %llu of them by the "
                     "syscall agent\n",
                     static_cast<unsigned long long>(notified_calls_), static_cast<unsigned long long>(emulated_calls_),
                     static_cast<unsigned long long>(agent_calls_));
    if (own_rdtsc_trap_ && std::getenv("REWIND_DEBUG"))
        std::fprintf(stderr, "[replay] %llu rdtsc of the tracer emulated\n",
                     static_cast<unsigned long long>(own_rdtsc_emulated()));
    for (auto& [rec, t] : tasks_) {
        if (t->at != Task::At::Gone)
            ::kill(t->tid(), SIGKILL);
    }
    // A process leader is reported only once its other threads are reaped.
    for (bool leaders : {false, true}) {
        for (auto& [rec, t] : tasks_) {
            if (t->at == Task::At::Gone || (t->tid() == t->group().tgid) != leaders)
                continue;
            int status;
            while (waitpid(t->tid(), &status, __WALL) < 0 && errno == EINTR) {
            }
        }
    }
}

// ---- the event loop -------------------------------------------------------

bool Replayer::step()
{
    auto e = source_.next();
    if (!e) {
        const StreamEnd& end = source_.end();
        if (end.kind != StreamEnd::Kind::Clean)
            throw ReplayError(ReplayErrorKind::TraceEnded, end.events, 0, "the event stream is " + describe(end));
        if (!trace_.end())
            throw ReplayError(ReplayErrorKind::TraceEnded, end.events, 0,
                              "the recorder did not finish: the trace ends after event " + std::to_string(end.events) +
                                  ", before the program did");
        return false;
    }
    current_ = e->index;
    in_flight_tid_ = event_tid(e->event);
    if (options_.on_event)
        options_.on_event(e->index, e->event);
    in_flight_ = true;
    dispatch(*e);
    in_flight_ = false;
    if (parallel_trace())
        last_events_[in_flight_tid_] = {e->index, std::string(event_kind_name(e->event))};
    if (options_.progress) {
        auto now = coarse_now();
        if (now - last_progress_ > std::chrono::milliseconds(250)) {
            options_.progress(current_ + 1);
            last_progress_ = now;
        }
    }
    return true;
}

ExitStatus Replayer::run_to_end()
{
    while (step_through(UINT64_MAX, std::chrono::steady_clock::time_point::max(), !hook_)) {
    }
    const TraceEnd& end = *trace_.end();
    auto it = finished_.find(initial_tid_);
    if (it == finished_.end() && end.detached) {
        // The recording let the program run on: so does nothing here.
        kill_world();
        return end.exit;
    }
    if (it == finished_.end())
        throw ReplayError(ReplayErrorKind::TraceEnded, current_, initial_tid_,
                          "the trace has no exit for the program's first process");
    ExitStatus replayed = ExitStatus::from_wait_status(
        it->second.kind == StopInfo::Kind::Signaled ? it->second.signal : (it->second.exit_code << 8));
    if (replayed.signaled != end.exit.signaled || replayed.code != end.exit.code || replayed.signal != end.exit.signal)
        throw ReplayError(ReplayErrorKind::Divergence, current_, initial_tid_,
                          "the program " + replayed.describe() + "; the recording " + end.exit.describe());
    return end.exit;
}

void Replayer::dispatch(const IndexedEvent& ie)
{
    if (notified_task_) {
        // Only its next syscall may come while a thread runs between
        // notified calls (may_serve_by_notification).
        const auto* call = std::get_if<SyscallEvent>(&ie.event);
        if (!call || call->tid != notified_task_->recorded_tid())
            settle_notified_run();
    }
    std::visit(
        [&](const auto& e) {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, SyscallEvent>)
                on_syscall(e);
            else if constexpr (std::is_same_v<T, ExecEvent>)
                on_exec(e);
            else if constexpr (std::is_same_v<T, ForkEvent>)
                on_fork(e);
            else if constexpr (std::is_same_v<T, ExitEvent>)
                on_exit(e);
            else if constexpr (std::is_same_v<T, SignalEvent>)
                on_signal(e);
            else if constexpr (std::is_same_v<T, RdtscEvent>)
                on_rdtsc(e);
            else if constexpr (std::is_same_v<T, PreemptEvent>)
                on_preempt(e);
            else if constexpr (std::is_same_v<T, SyncEvent>)
                on_sync(e);
            else if constexpr (std::is_same_v<T, RandomEvent>)
                on_random(e);
            else
                on_note(e);
        },
        ie.event);
}

void Replayer::on_note(const NoteEvent& e)
{
    if (e.kind == NoteKind::Incomplete)
        throw ReplayError(ReplayErrorKind::TraceEnded, current_, e.tid,
                          "the recording is incomplete here: " + e.message);
}

// ---- tasks ----------------------------------------------------------------

Task* Replayer::find_task(Tid recorded_tid)
{
    auto it = tasks_.find(recorded_tid);
    return it == tasks_.end() || it->second->at == Task::At::Gone ? nullptr : it->second.get();
}

Task& Replayer::task(Tid recorded_tid)
{
    if (Task* t = find_task(recorded_tid))
        return *t;
    throw ReplayError(ReplayErrorKind::Divergence, current_, recorded_tid,
                      "the event belongs to thread " + std::to_string(recorded_tid) +
                          ", which does not exist (any more) in the replay");
}

Task& Replayer::add_task(pid_t tid, Tid recorded_tid, std::shared_ptr<ThreadGroup> group,
                         std::shared_ptr<AddressSpace> vm)
{
    auto t = std::make_unique<Task>(tid, recorded_tid, std::move(group), std::move(vm));
    Task& ref = *t;
    tasks_[recorded_tid] = std::move(t);
    return ref;
}

void Replayer::remove_task(Task& t)
{
    if (notified_task_ == &t)
        forget_notified_run();
    t.at = Task::At::Gone;
    waiter_.forget(t.tid());
    auto& tasks = t.group().tasks;
    tasks.erase(std::remove(tasks.begin(), tasks.end(), &t), tasks.end());
    auto& vm_tasks = t.vm()->tasks;
    vm_tasks.erase(std::remove(vm_tasks.begin(), vm_tasks.end(), &t), vm_tasks.end());
}

namespace {

// What a thread that stopped answering is doing, from /proc: running (a
// loop that reaches no event), or sleeping in a syscall, or stopped.
std::string what_thread_does(pid_t tid)
{
    char state = thread_state(tid);
    if (!state)
        return "it no longer exists";
    std::ifstream sc("/proc/" + std::to_string(tid) + "/syscall");
    std::string nr, rest;
    sc >> nr;
    std::getline(sc, rest);
    std::string pc = rest.substr(rest.find_last_of(' ') + 1);
    switch (state) {
    case 'R':
        return "it is running";
    case 't':
    case 'T':
        return "it is stopped, state " + std::string(1, state);
    default:
        if (!nr.empty() && std::isdigit(static_cast<unsigned char>(nr[0])))
            return "it sleeps in syscall " + nr + " at " + pc;
        return "state " + std::string(1, state) + (nr.empty() ? "" : ", " + nr + (rest.empty() ? "" : " at " + pc));
    }
}

} // namespace

bool Replayer::claim_engine_int3(Task& t, const StopInfo& stop)
{
    if (!engine_int3_ || stop.kind != StopInfo::Kind::SignalDelivery || stop.signal != SIGTRAP ||
        t.regs()[Registers::RIP] != engine_int3_ + 1 || get_siginfo(t.tid()).si_code != SI_KERNEL)
        return false;
    // The int3 has run: the thread is at the instruction, not after it.
    Registers r = t.regs();
    r[Registers::RIP] = engine_int3_;
    t.set_regs(r);
    return true;
}

void Replayer::step_over_engine_int3(Task& t, perfclock::InstructionTrap& trap)
{
    trap.lift();
    engine_step_ = true;
    resume(t, Resume::Emulate, true);
    StopInfo step = wait_stop(t, "a step over the instruction at " + hex(trap.address()));
    engine_step_ = false;
    if (step.kind != StopInfo::Kind::SignalDelivery || step.signal != SIGTRAP)
        diverge(t, "stepping over the instruction at " + hex(trap.address()) + ": " + describe_stop(t, step));
    trap.plant();
}

StopInfo Replayer::wait_stop(Task& t, const std::string& waiting_for)
{
    std::optional<StopInfo> stop;
    auto watchdog = coarse_now() + options_.watchdog; // seconds: a tick's lag is nothing
    for (;;) {
        bool interrupting = interrupt_deadline_ && interrupt_tid_ == t.tid() && !interrupt_sent_;
        stop = waiter_.wait_until(t.tid(), interrupting ? std::min(watchdog, *interrupt_deadline_) : watchdog);
        if (notifier_ && notifier_->refused)
            throw ReplayError(ReplayErrorKind::Divergence, current_, t.recorded_tid(),
                              "a replayed " + *notifier_->refused + " (refused: rewind does not run it unseen)");
        if (!stop && interrupting && steady_now() < watchdog) {
            interrupt_deadline_.reset();
            interrupt_delay_.reset();
            interrupt_sent_ = ::syscall(SYS_tgkill, t.group().tgid, t.tid(), SIGSTOP) == 0;
            continue;
        }
        if (!stop)
            report_stuck(t, waiting_for);
        if (stop->kind == StopInfo::Kind::GroupStop && t.interrupt_stop_due) {
            // The PTRACE_INTERRUPT that ended a notified run, after a signal's stop.
            t.interrupt_stop_due = false;
            t.resume(t.last_resume);
            continue;
        }
        if (interrupt_sent_ && stop->kind == StopInfo::Kind::SignalDelivery && stop->signal == SIGSTOP &&
            t.tid() == interrupt_tid_) {
            // Our interrupt: nothing of the recording, so it is not delivered.
            interrupt_sent_ = false;
            t.at = Task::At::SignalStop;
            bool stepping = t.last_resume_stepped;
            if (hook_)
                hook_->on_interrupt(t);
            resume(t, t.last_resume, stepping);
            continue;
        }
        if (stop->kind == StopInfo::Kind::SignalDelivery && is_stray_signal(t.tid(), stop->signal)) {
            t.resume(t.last_resume);
            continue;
        }
        if (stop->kind != StopInfo::Kind::Exited && stop->kind != StopInfo::Kind::Signaled)
            t.reblock_sigtrap();
        bool engine_int3_hit = claim_engine_int3(t, *stop);
        bool preempt_point = preempt_point_trap(t, *stop);
        if (hook_ && stop->kind == StopInfo::Kind::SignalDelivery && stop->signal == SIGTRAP) {
            siginfo_t info = get_siginfo(t.tid());
            bool engine =
                (info.si_code == kTrapPerf && perf_data(info) == kTagEngine) || engine_step_ || engine_int3_hit;
            t.at = Task::At::SignalStop;
            DebugHook::Then then = engine ? DebugHook::Then::NotMine : hook_->on_trap(t, info);
            if (then != DebugHook::Then::NotMine) {
                if (preempt_point && preempt_search_->found)
                    break; // the debugger's stop is the event's point: the thread rests there
                resume(t, t.last_resume, then == DebugHook::Then::Step);
                // A thread counted or stepped trap by trap is moving, only
                // slowly (a trap per execution where debug registers do not
                // work): the watchdog is for one that never stops.
                watchdog = steady_now() + options_.watchdog;
                continue;
            }
        }
        break;
    }
    switch (stop->kind) {
    case StopInfo::Kind::Exited:
    case StopInfo::Kind::Signaled:
        t.final_status = stop;
        finished_[t.recorded_tid()] = *stop;
        remove_task(t);
        break;
    case StopInfo::Kind::SyscallStop:
        t.at = Task::At::SyscallEntry;
        if (t.last_resume_stepped) {
            // The syscall instruction ran under a single step (a debugger's
            // step, a search's): the CPU saved rflags, trap flag included,
            // in r11, which the recorded run, never stepped, did not have.
            Registers r = t.regs();
            if (r[Registers::R11] & kTrapFlag) {
                r[Registers::R11] &= ~kTrapFlag;
                t.set_regs(r);
            }
        }
        break;
    case StopInfo::Kind::SignalDelivery:
        t.at = Task::At::SignalStop;
        break;
    default:
        t.at = Task::At::EventStop;
        break;
    }
    return *stop;
}

void Replayer::report_stuck(Task& t, const std::string& waiting_for)
{
    std::string doing = what_thread_does(t.tid());
    if (doing == "it is running") {
        // Where: a loop that never ends says more than "running".
        ::syscall(SYS_tgkill, t.group().tgid, t.tid(), SIGSTOP);
        if (waiter_.wait_until(t.tid(), steady_now() + std::chrono::seconds(1)))
            doing += " at " + hex(t.regs()[Registers::RIP]);
    }
    throw ReplayError(ReplayErrorKind::Stuck, current_, t.recorded_tid(),
                      "thread " + std::to_string(t.recorded_tid()) + " did not reach " + waiting_for + " within " +
                          std::to_string(options_.watchdog.count()) + " s (" + doing + ")",
                      stuck_details(t.recorded_tid()));
}

bool Replayer::defer_own_interrupt(Task& t, const StopInfo& s)
{
    if (!interrupt_sent_ || s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGSTOP ||
        t.tid() != interrupt_tid_)
        return false;
    // It landed in calls the replayer injects: the hook hears of it once
    // they are done, from another interrupt sent soon after.
    interrupt_sent_ = false;
    interrupt_after(t, kDeferredInterrupt);
    return true;
}

void Replayer::interrupt_after(Task& task, std::chrono::nanoseconds after)
{
    interrupt_tid_ = task.tid();
    interrupt_delay_ = after;
    interrupt_deadline_.reset();
}

void Replayer::resume(Task& t, Resume how, bool step)
{
    step = step || t.step_on_resume || t.single_stepping;
    t.step_on_resume = false;
    // A syscall that must run for real cannot be single-stepped: stepping
    // over the instruction would run it without its entry stop. It runs as
    // an event instead, and the debugger sees the step end after it.
    if (step && how != Resume::Emulate) {
        uint8_t insn[2] = {};
        if (t.memory().read_partial(RemoteAddr(t.regs()[Registers::RIP]), insn) == 2 && insn[0] == 0x0f &&
            insn[1] == 0x05)
            step = false;
    }
    if (interrupt_delay_ && !interrupt_deadline_ && t.tid() == interrupt_tid_)
        interrupt_deadline_ = steady_now() + *interrupt_delay_; // running from now
    if (how == Resume::Syscall && t.emulated_entry && t.at == Task::At::SyscallEntry) {
        // From a PTRACE_SYSEMU entry, PTRACE_SYSCALL first reports the
        // skipped syscall's exit.
        t.resume(how);
        StopInfo s = wait_stop(t, "the end of an emulated syscall");
        if (s.kind != StopInfo::Kind::SyscallStop)
            diverge(t, "after an emulated syscall, got " + describe_stop(t, s));
    }
    t.resume(how, step);
}

void Replayer::collect_fresh(Task& t)
{
    if (t.at != Task::At::Fresh)
        return;
    StopInfo s = wait_stop(t, "its first stop");
    if (t.group().killed && t.at == Task::At::Gone)
        return; // killed with its process before it ever ran (wait_stop kept its end)
    if ((s.kind == StopInfo::Kind::Exited || s.kind == StopInfo::Kind::Signaled) && t.at == Task::At::Gone) {
        // Ended by a sibling's exit_group before it ran a user instruction:
        // in the recording too, if its next event is its end (the kernel
        // side saw its return from clone in the kernel, where the exit
        // caught it; on this schedule the exit came first).
        const IndexedEvent* next = source_.peek_for_task(t.recorded_tid());
        if (next && std::holds_alternative<ExitEvent>(next->event))
            return;
    }
    if (s.kind != StopInfo::Kind::GroupStop)
        diverge(t, "a new task's first stop was " + describe_stop(t, s));
}

std::string Replayer::describe_stop(Task& t, const StopInfo& s)
{
    bool reads_registers = s.kind == StopInfo::Kind::SyscallStop || s.kind == StopInfo::Kind::SignalDelivery;
    if (reads_registers && !in_ptrace_stop(t.tid()))
        return (s.kind == StopInfo::Kind::SyscallStop ? "a syscall stop" : "signal " + signal_name(s.signal)) +
               std::string(", which the thread has left since (killed)");
    switch (s.kind) {
    case StopInfo::Kind::Exited:
        return "an exit with status " + std::to_string(s.exit_code);
    case StopInfo::Kind::Signaled:
        return "death by " + signal_name(s.signal);
    case StopInfo::Kind::SyscallStop: {
        const Registers& r = t.regs();
        SyscallEvent call;
        call.nr = static_cast<int32_t>(r[Registers::ORIG_RAX]);
        call.args = {r[Registers::RDI], r[Registers::RSI], r[Registers::RDX],
                     r[Registers::R10], r[Registers::R8],  r[Registers::R9]};
        std::string text = format_syscall_call(call);
        return "a syscall: " + text.substr(0, text.rfind(" = "));
    }
    case StopInfo::Kind::SignalDelivery: {
        char buf[64];
        std::snprintf(buf, sizeof(buf), " at rip %#llx", static_cast<unsigned long long>(t.regs()[Registers::RIP]));
        return "signal " + signal_name(s.signal) + buf;
    }
    case StopInfo::Kind::PtraceEvent:
        return "ptrace event " + std::to_string(s.event);
    case StopInfo::Kind::GroupStop:
        return "a stop (" + signal_name(s.signal) + ")";
    }
    return "?";
}

void Replayer::diverge(Task& t, std::string what, std::string details)
{
    if (const auto& scrubbed = trace_.meta().scrubbed_env; !scrubbed.empty()) {
        std::string names;
        for (const auto& n : scrubbed)
            names += (names.empty() ? "" : ", ") + n;
        details += std::string(details.empty() ? "" : "\n") + "  note: the recording kept " + names +
                   " out of the trace (record --scrub-env): the replayed program sees placeholders, and "
                   "departs from the recording where it uses them";
    }
    if (parallel_trace())
        details += std::string(details.empty() ? "" : "\n") +
                   "  note: the threads of this recording ran in parallel (record --parallel); replay orders them "
                   "only at\n  synchronization calls and syscalls, so shared data used without them (a data race, "
                   "atomics,\n  spin-waits, glibc's internal locks such as malloc's list of arenas when one thread "
                   "starts as\n  another ends) can be met in another order. A recording made with --serialize (the "
                   "default)\n  replays such a program exactly." +
                   other_threads_last_events(t.recorded_tid());
    throw ReplayError(ReplayErrorKind::Divergence, current_, t.recorded_tid(), std::move(what), std::move(details));
}

std::string Replayer::checked_copy(Tid tid, const std::string& content_hash, const std::string& path) const
{
    std::string why;
    std::filesystem::path copy;
    try {
        copy = trace_.verified_file_copy(content_hash, why);
    } catch (const rw::FormatError& e) {
        why = e.what();
    }
    if (copy.empty())
        throw ReplayError(ReplayErrorKind::Damaged, current_, tid, "the copy of " + path + " cannot be used",
                          "  " + why);
    // The replayed processes open it from their own working directory,
    // which is not rewind's.
    return std::filesystem::absolute(copy).string();
}

void Replayer::refuse(Tid tid, std::string what, std::string details)
{
    throw ReplayError(ReplayErrorKind::Refused, current_, tid, std::move(what), std::move(details));
}

} // namespace rw::replay
