#include "replayer.h"

#include "instruction_trap.h"
#include "stray_signal.h"

#include <elf.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
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
#include <filesystem>
#include <system_error>
#include <fstream>

#include "bytes.h"
#include "cpu_pin.h"
#include "event_format.h"
#include "steady_now.h"
#include "text.h"
#include "launcher.h"
#include "own_tsc_trap.h"
#include "process_image.h"
#include "replay_limits.h"
#include "trap_tags.h"

namespace rw::replay {
namespace fs = std::filesystem;

Replayer::Replayer(const Trace& trace, ReplayOptions options)
    : trace_(trace), options_(std::move(options)), source_(trace.events()),
      parallel_(trace.meta().thread_mode == "parallel")
{
    if (parallel_trace())
        source_.order_by_seq();
    if (const char* v = std::getenv("REWIND_NOTIFY_SYSCALLS"); v && std::string(v) == "0")
        options_.notify_syscalls = false; // every syscall a ptrace stop (for comparisons)
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
        std::fprintf(stderr, "[replay] %llu of %llu emulated syscalls served by seccomp notification\n",
                     static_cast<unsigned long long>(notified_calls_),
                     static_cast<unsigned long long>(emulated_calls_));
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
    for (const auto& f : temp_files_)
        ::unlink(f.c_str());
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

bool in_ptrace_stop(pid_t tid)
{
    errno = 0;
    ::ptrace(PTRACE_PEEKUSER, tid, nullptr, nullptr);
    return errno != ESRCH;
}

// What a thread that stopped answering is doing, from /proc: running (a
// loop that reaches no event), or sleeping in a syscall, or stopped.
std::string what_thread_does(pid_t tid)
{
    std::ifstream stat("/proc/" + std::to_string(tid) + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return "it no longer exists";
    size_t paren = line.rfind(')');
    char state = paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
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

void Replayer::step_over_engine_int3(Task& t, InstructionTrap& trap)
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
    return copy.string();
}

void Replayer::refuse(Tid tid, std::string what, std::string details)
{
    throw ReplayError(ReplayErrorKind::Refused, current_, tid, std::move(what), std::move(details));
}

// ---- launch and exec ------------------------------------------------------

std::vector<BindMount> Replayer::binds_for(const ExecEvent& e, bool skip_mounted) const
{
    std::vector<BindMount> binds;
    for (const MountedFile& f : mapped_copies(e)) {
        // The same copy mounted again over itself would change nothing the
        // program sees, but CRIU cannot save files on overmounted mounts.
        if (skip_mounted && std::find(mounted_.begin(), mounted_.end(), f) != mounted_.end())
            continue;
        binds.push_back({f.target, checked_copy(e.tid, f.content_hash, f.target)});
    }
    return binds;
}

void Replayer::launch(const ExecEvent& first)
{
    std::vector<BindMount> binds = binds_for(first);
    for (const auto& b : binds)
        if (!fs::exists(b.source))
            refuse(first.tid, "the trace's copy of " + b.target + " is missing (" + b.source + ")");
    const TraceMeta& meta = trace_.meta();
    auto prepare = [&]() -> std::string {
        if (std::string err = enter_private_mount_namespace(); !err.empty())
            return err;
        if (std::string err = apply_bind_mounts(binds); !err.empty())
            return err;
        if (::chdir(meta.cwd.c_str()) != 0)
            ::chdir("/");
        for (const auto& r : meta.rlimits) {
            struct rlimit l = {r.cur, r.max};
            setrlimit(static_cast<__rlimit_resource>(r.resource), &l);
        }
        // Nothing the program does reaches the outside world: its reads and
        // writes are served from the log.
        int null = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
        if (null > 2)
            ::close(null);
        // Whatever launched the replay (gdb, an IDE, a socket) is not the
        // program's: its fds come from the log.
        ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        return disable_aslr_and_trap_tsc();
    };
    // The exec event holds the argv the new image saw; for a #! script the
    // kernel rewrote it (interpreter first), so the launch repeats the argv
    // the recorder passed to execve instead.
    const std::vector<std::string>& argv = meta.argv.empty() ? first.argv : meta.argv;
    Launcher launcher(first.filename, argv, first.envp, meta.signals, prepare);
    if (ptrace(PTRACE_SEIZE, launcher.pid(), nullptr, reinterpret_cast<void*>(kReplayPtraceOptions)) != 0)
        refuse(first.tid, std::string("cannot trace the replayed program: ") + strerror(errno));
    auto group = std::make_shared<ThreadGroup>();
    group->recorded_tgid = first.tgid;
    group->tgid = launcher.pid();
    group->fds = std::make_shared<StdioFds>(StdioFds::inherited());
    auto vm = std::make_shared<AddressSpace>();
    vm->id = next_vm_id_++;
    Task& t = add_task(launcher.pid(), first.tid, group, vm);
    t.at = Task::At::Running;
    initial_tid_ = first.tid;
    launched_ = true;
    note_mounts(first);
    if (std::string err = launcher.release(); !err.empty())
        refuse(first.tid, "cannot start the replay: " + err);
}

void Replayer::on_exec(const ExecEvent& e)
{
    if (auto why = replay_limit(e))
        refuse(e.tid, *why);
    if (!launched_) {
        launch(e);
    } else {
        Task& t = task(e.former_tid ? e.former_tid : e.tid);
        if (e.former_tid && e.former_tid != e.tid)
            refuse(e.tid, "execve from a non-leader thread is not replayed yet");
        collect_fresh(t);
        // The execve that leads here; its path and arguments must be the same.
        std::vector<BindMount> binds = binds_for(e, true);
        if (std::string err = apply_bind_mounts_in(t.tid(), binds); !err.empty())
            refuse(e.tid, "preparing the files of execve(" + e.filename + "): " + err);
        note_mounts(e);
        resume(t, Resume::Syscall);
        StopInfo s = wait_stop(t, "execve(\"" + e.filename + "\")");
        if (s.kind != StopInfo::Kind::SyscallStop || t.regs()[Registers::ORIG_RAX] != SYS_execve)
            diverge(t, "expected execve(\"" + e.filename + "\"), got " + describe_stop(t, s));
        auto path = t.memory().read_string(RemoteAddr(t.regs()[Registers::RDI]), 4096);
        if (!path || *path != e.filename)
            diverge(t, "execve of a different program",
                    "  expected \"" + e.filename + "\"\n  actual   \"" + path.value_or("<unreadable>") + "\"");
        resume(t, Resume::Syscall);
    }
    Task& t = task(e.tid);
    StopInfo s = wait_stop(t, "the new image of execve(\"" + e.filename + "\")");
    if (s.kind != StopInfo::Kind::PtraceEvent || s.event != PTRACE_EVENT_EXEC)
        diverge(t, "execve(\"" + e.filename + "\") did not succeed: got " + describe_stop(t, s));
    check_exec_image(t, e);
    t.clear_child_tid = 0; // exec releases both
    t.alt_stack = false;
    t.at = Task::At::ExecutingCall;
    // The exec releases a vfork parent. Had it still waited, the parent's
    // return would run the child's events after the exec ahead of other
    // processes' (a make -j2 trace replayed a whole assembler run early).
    for (auto& [tid, other] : tasks_)
        if (other->vfork_child == e.tid)
            other->vfork_child = 0;
}

void Replayer::check_exec_image(Task& t, const ExecEvent& e)
{
    TraceeMemory mem = t.memory();
    Registers regs = t.regs();
    auto stack = read_initial_stack(mem, regs[Registers::RSP]);
    if (!stack)
        diverge(t, "cannot read the initial stack after execve");
    if (!hide_vdso(mem, *stack))
        diverge(t, "cannot hide the vDSO after execve");
    if (auto random = stack->aux(AT_RANDOM))
        mem.write(RemoteAddr(*random), e.at_random);
    // The replay runs with rewind's own credentials (the syscalls that
    // changed them are emulated): the recorded ones go where the program
    // and its loader read them.
    for (size_t i = 0; i + 1 < stack->auxv.size() && i + 1 < e.auxv.size(); i += 2)
        if (stack->auxv[i] == e.auxv[i] && is_credential_aux(e.auxv[i]) && stack->auxv[i + 1] != e.auxv[i + 1]) {
            uint64_t value = e.auxv[i + 1];
            mem.write(RemoteAddr(stack->auxv_addr + (i + 1) * sizeof(uint64_t)),
                      {reinterpret_cast<const uint8_t*>(&value), sizeof value});
            stack->auxv[i + 1] = value;
        }
    std::string details;
    if (stack->argv != e.argv)
        details += "  argv differs\n";
    if (stack->envp != e.envp)
        details += "  environment differs\n";
    if (stack->auxv != e.auxv) {
        for (size_t i = 0; i + 1 < std::max(stack->auxv.size(), e.auxv.size()); i += 2) {
            uint64_t k1 = i < e.auxv.size() ? e.auxv[i] : 0, v1 = i + 1 < e.auxv.size() ? e.auxv[i + 1] : 0;
            uint64_t k2 = i < stack->auxv.size() ? stack->auxv[i] : 0,
                     v2 = i + 1 < stack->auxv.size() ? stack->auxv[i + 1] : 0;
            if (k1 != k2 || v1 != v2) {
                char buf[160];
                std::snprintf(buf, sizeof(buf), "  auxiliary vector: recorded %llu=%#llx, replay %llu=%#llx\n",
                              (unsigned long long)k1, (unsigned long long)v1, (unsigned long long)k2,
                              (unsigned long long)v2);
                details += buf;
                break;
            }
        }
    }
    if (regs[Registers::RSP] != e.regs[Registers::RSP] || regs[Registers::RIP] != e.regs[Registers::RIP])
        details += "  initial stack pointer or entry point differs (different program or memory layout)\n";
    auto maps = read_mappings(t.tid());
    auto strip = [](std::string p) {
        if (auto pos = p.rfind(" (deleted)"); pos != std::string::npos && pos + 10 == p.size())
            p.resize(pos);
        return p;
    };
    size_t n = std::min(maps.size(), e.mappings.size());
    for (size_t i = 0; i < n && details.empty(); i++) {
        const auto& a = e.mappings[i];
        const auto& b = maps[i];
        if (a.start != b.start || a.end != b.end || a.perms != b.perms || strip(a.path) != strip(b.path)) {
            char buf[256];
            std::snprintf(buf, sizeof(buf), "  mapping %zu: recorded %lx-%lx %s %s, replay %lx-%lx %s %s\n", i,
                          (unsigned long)a.start, (unsigned long)a.end, a.perms.c_str(), a.path.c_str(),
                          (unsigned long)b.start, (unsigned long)b.end, b.perms.c_str(), b.path.c_str());
            details += buf;
        }
    }
    if (maps.size() != e.mappings.size() && details.empty())
        details +=
            "  " + std::to_string(maps.size()) + " mappings, recorded " + std::to_string(e.mappings.size()) + "\n";
    if (!details.empty()) {
        details.pop_back();
        diverge(t, "the program image after execve(\"" + e.filename + "\") differs from the recording", details);
    }
}

namespace {

// Where a clone call asks the kernel to store the new thread's id:
// CLONE_PARENT_SETTID and CLONE_CHILD_SETTID (0 when not given).
struct SetTidAddresses {
    uint64_t parent = 0, child = 0;
};

SetTidAddresses settid_addresses(const SyscallEvent& call)
{
    SetTidAddresses a;
    if (call.nr == SYS_clone) {
        a.parent = call.args[2];
        a.child = call.args[3];
    } else if (call.nr == SYS_clone3) {
        for (const auto& m : call.memory)
            if (m.dir == Direction::In && m.bytes.size() >= 32) {
                std::memcpy(&a.child, m.bytes.data() + 16, 8);
                std::memcpy(&a.parent, m.bytes.data() + 24, 8);
            }
    }
    return a;
}

} // namespace

void Replayer::store_recorded_tid(Task& t, uint64_t addr, Tid recorded)
{
    // The kernel stored the replay's own id there; the program must see the recorded one.
    int32_t value = recorded;
    if (addr && !t.memory().write(RemoteAddr(addr), {reinterpret_cast<const uint8_t*>(&value), sizeof(value)}))
        diverge(t, "cannot store the thread id " + std::to_string(recorded) + " where its clone asked (" + hex(addr) +
                       ")");
}

uint64_t clone_flags(const SyscallEvent& call)
{
    switch (call.nr) {
    case SYS_clone:
        return call.args[0];
    case SYS_vfork:
        return CLONE_VM | CLONE_VFORK;
    case SYS_clone3:
        // struct clone_args starts with the flags; the trace keeps its bytes.
        for (const auto& m : call.memory)
            if (m.dir == Direction::In && m.bytes.size() >= 8) {
                uint64_t flags;
                std::memcpy(&flags, m.bytes.data(), 8);
                return flags;
            }
        return 0;
    default:
        return 0;
    }
}

void Replayer::on_fork(const ForkEvent& e)
{
    Task& parent = task(e.parent_tid);
    collect_fresh(parent);
    // The parent's clone call follows later in the stream; its arguments are checked here.
    const IndexedEvent* call = source_.peek_for_task(e.parent_tid);
    const auto* sc = call ? std::get_if<SyscallEvent>(&call->event) : nullptr;
    if (!sc)
        refuse(e.parent_tid, "the trace has a new task without the clone that created it");
    run_to_syscall_entry(parent, *sc, Resume::Syscall);
    // The child gets a copy of the parent's memory, debugger breakpoints
    // included, unless it is a thread of the same process.
    bool copies_memory = !e.is_thread();
    if (hook_ && copies_memory)
        hook_->before_fork(parent);
    resume(parent, Resume::Syscall);
    StopInfo s = wait_stop(parent, "the creation of task " + std::to_string(e.child_tid));
    if (s.kind != StopInfo::Kind::PtraceEvent ||
        (s.event != PTRACE_EVENT_FORK && s.event != PTRACE_EVENT_VFORK && s.event != PTRACE_EVENT_CLONE))
        diverge(parent, syscall_name(sc->nr) + " did not create a task: got " + describe_stop(parent, s));
    pid_t child = static_cast<pid_t>(get_event_msg(parent.tid()));
    uint64_t flags = clone_flags(*sc);
    std::shared_ptr<ThreadGroup> group;
    std::shared_ptr<AddressSpace> vm;
    if (e.is_thread()) {
        group = parent.group_ptr();
    } else {
        group = std::make_shared<ThreadGroup>();
        group->recorded_tgid = e.child_tgid;
        group->tgid = child;
        group->fds = (flags & CLONE_FILES) ? parent.group().fds : std::make_shared<StdioFds>(*parent.group().fds);
    }
    if (flags & CLONE_VM) {
        vm = parent.vm();
    } else {
        vm = std::make_shared<AddressSpace>();
        vm->id = next_vm_id_++;
    }
    Task& created = add_task(child, e.child_tid, group, vm);
    // Only the parent's call says where: the child's own record of it reads
    // the arguments when the child first runs, after the parent moved on.
    SetTidAddresses settid = settid_addresses(*sc);
    if (flags & CLONE_PARENT_SETTID)
        store_recorded_tid(parent, settid.parent, e.child_tid);
    if (flags & CLONE_CHILD_SETTID)
        created.child_settid = settid.child; // written once the child has started
    if (flags & CLONE_CHILD_CLEARTID)
        created.clear_child_tid = settid.child;
    created.alt_stack = parent.alt_stack && !(flags & CLONE_VM); // a thread starts without one
    parent.at = Task::At::ExecutingCall;
    if (s.event == PTRACE_EVENT_VFORK)
        parent.vfork_child = e.child_tid;
    // A vfork child shares the parent's memory until it execs: breakpoints
    // come back when the parent returns (finish_executing_call).
    if (hook_ && copies_memory && !(flags & CLONE_VM))
        hook_->after_fork(parent);
}

std::optional<uint64_t> Replayer::stop_before_exit_call()
{
    const IndexedEvent* next = source_.peek();
    const auto* e = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    // Threads an exit_group killed may come first: the stop is before that call.
    if (const ExitEvent* caller = killed_by_group_exit_ahead(next))
        e = caller;
    Task* live = e ? find_task(e->tid) : nullptr;
    if (!live || WIFSIGNALED(e->exit_code) || (e->pending_nr != SYS_exit && e->pending_nr != SYS_exit_group) ||
        live->at == Task::At::Running || live->inject_signal)
        return std::nullopt;
    Task& t = *live;
    collect_fresh(t);
    SyscallEvent call;
    call.nr = e->pending_nr;
    call.args = e->pending_args;
    run_to_syscall_entry(t, call, Resume::Syscall);
    // Back out of the call: skip it, then put the registers as they were
    // just before the syscall instruction.
    Registers before = t.regs();
    before[Registers::RIP] -= 2;
    before[Registers::RAX] = before[Registers::ORIG_RAX];
    before[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    Registers skip = t.regs();
    skip[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    t.set_regs(skip);
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "the end of a skipped " + syscall_name(call.nr) + "()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "skipping " + syscall_name(call.nr) + "() gave " + describe_stop(t, s));
    t.set_regs(before);
    t.at = Task::At::SyscallExit;
    return before[Registers::RIP];
}

Task* Replayer::sibling_delivering(Task& t, int exit_code)
{
    if (!WIFSIGNALED(exit_code))
        return nullptr;
    for (Task* other : t.group().tasks)
        if (other != &t && other->inject_signal == WTERMSIG(exit_code) && other->at != Task::At::Gone)
            return other;
    return nullptr;
}

const ExitEvent* Replayer::group_exit_ahead(Task& t)
{
    // Near: the killed threads' exits come one after another, right before.
    constexpr size_t kNear = 64;
    for (Task* other : t.group().tasks) {
        if (other == &t || other->at == Task::At::Gone)
            continue;
        const IndexedEvent* next = source_.peek_for_task(other->recorded_tid(), 0, kNear);
        const auto* exit = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
        if (exit && exit->pending_nr == SYS_exit_group && !WIFSIGNALED(exit->exit_code))
            return exit;
    }
    return nullptr;
}

const ExitEvent* Replayer::killed_by_group_exit_ahead(const IndexedEvent* next)
{
    const auto* e = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    if (!e || WIFSIGNALED(e->exit_code) || e->pending_nr == SYS_exit || e->pending_nr == SYS_exit_group)
        return nullptr;
    Task* t = find_task(e->tid);
    return t ? group_exit_ahead(*t) : nullptr;
}

void Replayer::run_group_exit_ahead(Task& t)
{
    const ExitEvent* caller = group_exit_ahead(t);
    if (!caller)
        return;
    auto ahead = source_.take_for_task(caller->tid);
    uint64_t saved = current_;
    current_ = ahead->index;
    dispatch(*ahead);
    current_ = saved;
}

void Replayer::on_exit(const ExitEvent& e)
{
    Task* live = find_task(e.tid);
    StopInfo final;
    if (!live) {
        auto it = finished_.find(e.tid);
        if (it == finished_.end())
            refuse(e.tid, "the trace has an exit for thread " + std::to_string(e.tid) + ", unknown to the replay");
        final = it->second;
    } else {
        Task& t = *live;
        collect_fresh(t);
        bool voluntary = e.pending_nr == SYS_exit || e.pending_nr == SYS_exit_group;
        if (voluntary && !WIFSIGNALED(e.exit_code)) {
            SyscallEvent call;
            call.nr = e.pending_nr;
            call.args = e.pending_args;
            run_to_syscall_entry(t, call, Resume::Syscall);
            resume(t, Resume::Cont);
        } else if (t.inject_signal) {
            // The fatal signal is the one just delivered.
            resume(t, Resume::Cont);
        } else if (Task* killer = sibling_delivering(t, e.exit_code)) {
            // A sibling's fatal signal, delivered but not yet acted on,
            // ends the whole process: it goes first, and this thread dies
            // of it as in the recording (a SIGKILL from here would end the
            // process with another signal).
            resume(*killer, Resume::Cont);
        } else if (WIFSIGNALED(e.exit_code) && t.at != Task::At::Running) {
            // Killed from outside (SIGKILL, or a sibling's exit_group): the
            // recording saw no more of it, so neither does the replay.
            ::kill(t.tid(), SIGKILL);
        } else if (t.at != Task::At::Running) {
            // A sibling's exit_group may already have taken it (it was
            // stopped in a futex the recording shows it never left): then
            // there is nothing to resume, only its end to collect. The
            // kernel may also report the killed threads' exits before the
            // exit of the thread that called exit_group: that call goes
            // first here, or this thread would wait for it forever.
            run_group_exit_ahead(t);
            try {
                resume(t, Resume::Cont);
            } catch (const std::system_error& x) {
                if (x.code().value() != ESRCH)
                    throw;
            }
        } else if (!WIFSIGNALED(e.exit_code)) {
            // Asleep in the futex of a synchronization call that runs for
            // real (a parallel trace): only the sibling's exit_group ends
            // it, and its exit may come first in the recording too.
            run_group_exit_ahead(t);
        }
        for (;;) {
            final = wait_stop(t, "its exit");
            if (final.kind == StopInfo::Kind::Exited || final.kind == StopInfo::Kind::Signaled)
                break;
            if (final.kind == StopInfo::Kind::PtraceEvent && final.event == PTRACE_EVENT_EXIT) {
                resume(t, Resume::Cont);
                continue;
            }
            // A stop taken before a sibling's exit_group killed it (a woken
            // waiter held at its futex's exit): the kill ended that stop.
            if (!voluntary && !in_ptrace_stop(t.tid()))
                continue;
            diverge(t, "expected the thread to exit, got " + describe_stop(t, final));
        }
    }
    // A thread's own exit status is only meaningful for the thread that
    // ends its process; the others vanish with it.
    bool recorded_signaled = WIFSIGNALED(e.exit_code);
    bool replay_signaled = final.kind == StopInfo::Kind::Signaled;
    if (e.group_dead) {
        int rec = recorded_signaled ? WTERMSIG(e.exit_code) : WEXITSTATUS(e.exit_code);
        int got = replay_signaled ? final.signal : final.exit_code;
        if (recorded_signaled != replay_signaled || rec != got) {
            throw ReplayError(
                ReplayErrorKind::Divergence, current_, e.tid,
                std::string("thread ") + std::to_string(e.tid) + " ended differently",
                std::string("  recorded: ") +
                    (recorded_signaled ? "killed by " + signal_name(rec) : "exit " + std::to_string(rec)) +
                    "\n  replay:   " +
                    (replay_signaled ? "killed by " + signal_name(got) : "exit " + std::to_string(got)));
        }
    }
}

} // namespace rw::replay
