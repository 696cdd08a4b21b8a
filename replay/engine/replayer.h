// Deterministic replay of a trace under ptrace.
//
// Events are replayed in stream order; for each one, the task it belongs to
// runs until it reaches that event, and only that task runs. Because the
// replayer always knows a task's next event, it resumes the task in the mode
// that stops it exactly there: PTRACE_SYSEMU when the next syscall is served
// from the log (the kernel skips it), PTRACE_SYSCALL when it must run for
// real (mmap, brk, clone, execve…, as the syscall table says). Every stop is
// checked against the event; any difference is a ReplayError naming the
// event, never a silent continuation.
#pragma once

#include <sys/ptrace.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "debug_hook.h"
#include "event.h"
#include "event_source.h"
#include "instruction_trap.h"
#include "fork_advice.h"
#include "mapped_file_copies.h"
#include "replay_limits.h"
#include "sysv_segments.h"
#include "mount_view.h"
#include "own_tsc_trap.h"
#include "replay_error.h"
#include "snapshot.h"
#include "stop_waiter.h"
#include "sync_call_state.h"
#include "syscall_notifier.h"
#include "syscall_table.h"
#include "task.h"
#include "trace.h"
#include "trace_meta.h"

namespace rw::replay {

struct DescriptorRoute;

struct ReplayOptions {
    bool echo_output = true;                              // re-emit what the program wrote to stdout/stderr
    int stdout_fd = 1, stderr_fd = 2;                     // … to these descriptors
    bool echo_repeats = false;                            // … again when a restored snapshot replays it again
    std::chrono::seconds watchdog{120};                   // no stop from a running task for this long: Stuck
    std::function<void(uint64_t)> progress;               // called now and then with the next event index
    std::function<void(uint64_t, const Event&)> on_event; // called before each event is replayed
    // Run on one CPU (cpu_pin.h): replays without a debugger. A debugging
    // session's searches (rewind watch) varied too much from run to run,
    // pinned or not, to show a gain, and some runs were slower pinned.
    bool one_cpu = false;
    // Serve runs of recorded syscalls through seccomp user notifications
    // (syscall_notifier.h) in step_through(). Off where the replayed
    // processes are dumped with CRIU (a landmark image would keep a filter
    // whose listener is gone).
    bool notify_syscalls = true;
    // Within those runs, answer calls inside the program with the syscall
    // agent (syscall_agent.h); REWIND_SYSCALL_AGENT=0 turns it off.
    bool syscall_agent = true;
};

// The clone flags of a fork-like syscall event.
uint64_t clone_flags(const SyscallEvent& call);

// Whether a run of calls served by notification may take this event
// (replay_notified.cpp).
bool notified_call(const SyscallEvent& e);

// How every replayed thread is traced.
inline constexpr unsigned long kReplayPtraceOptions = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
                                                      PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;

// Whether the thread sleeps in a futex wait no one has woken. Anything else
// (running, a page being read in) means it is on its way to its next stop.
bool asleep_in_futex(pid_t tid);

class Replayer {
public:
    Replayer(const Trace& trace, ReplayOptions options);
    ~Replayer();
    Replayer(const Replayer&) = delete;
    Replayer& operator=(const Replayer&) = delete;

    // Replays every event. Returns how the recorded program ended (it ended
    // the same way in replay). Throws ReplayError.
    ExitStatus run_to_end();

    // Replays one event; false once the trace is fully replayed.
    bool step();
    // Replays events up to index `last` at most, one at least, and stops
    // after one that left its thread stopped where step() leaves it. Runs
    // of one thread's syscalls before `last` and before `deadline` are
    // served through seccomp notifications, the thread running between
    // them (nothing can look at it there). False at the end of the trace.
    // `untrapped`: no debugger trap is in the process (StopWaiter's quiet
    // waits).
    bool step_through(uint64_t last, std::chrono::steady_clock::time_point deadline, bool untrapped = false);
    uint64_t next_event_index() { return source_.next_index(); }
    // The next event, without replaying it (nullptr at the end of the trace).
    const IndexedEvent* peek_next_event() { return source_.peek(); }
    // If `next` is the exit of a thread a sibling's exit_group killed, and
    // that sibling's exit follows near in the stream: the sibling's exit.
    const ExitEvent* killed_by_group_exit_ahead(const IndexedEvent* next);
    // The thread that runs now: the one whose event is being replayed, or
    // else the next event's (0 at the end of the trace).
    Tid running_thread()
    {
        if (in_flight_)
            return in_flight_tid_;
        const IndexedEvent* next = source_.peek();
        return next ? event_tid(next->event) : 0;
    }

    // Debugging.
    void set_debug_hook(DebugHook* hook) { hook_ = hook; }
    // Stops `task` once it has run for `after` (while the replayer waits on
    // it) and reports that to the hook's on_interrupt; the task then goes on.
    void interrupt_after(Task& task, std::chrono::nanoseconds after);
    // Whether `s` is the stop of the interrupt interrupt_after() sent; if so
    // it is sent again shortly (for a stop inside calls the replayer injects).
    bool defer_own_interrupt(Task& t, const StopInfo& s);
    static constexpr std::chrono::milliseconds kDeferredInterrupt{1};
    void cancel_interrupt()
    {
        interrupt_deadline_.reset();
        interrupt_delay_.reset();
    }
    // Threads of a parallel trace asleep in a synchronization call's futex
    // (replay_park.cpp) run for real and cannot be looked at: these stop
    // them while a debugger looks at the program, and put them back to
    // sleep (or hand over the wake-up they had meanwhile) after.
    // Returns the threads it stopped (not those stopped already), which
    // unpark_sleepers() takes.
    std::vector<Tid> park_sleepers();
    void unpark_sleepers(const std::vector<Tid>& sleepers);
    // The same for the threads asleep on one futex word only.
    std::vector<Tid> park_sleepers_on(uint64_t word);
    // The byte under the engine's int3 at `addr`, if it has one there now
    // (a debugger inserting its own int3 there shares it).
    std::optional<uint8_t> engine_byte_under(uint64_t addr) const;
    // Puts back the byte under the engine's int3 if it lies in [addr, addr + data.size()).
    void hide_engine_int3(uint64_t addr, std::span<uint8_t> data) const;
    // When the next event is a thread's exit or exit_group: runs it to just
    // before that syscall instruction (the last state of the program) and
    // returns the instruction's address. Replaying the exit goes on from there.
    std::optional<uint64_t> stop_before_exit_call();
    Task* find_task(Tid recorded_tid);
    std::vector<pid_t> live_processes();
    std::vector<Task*> live_tasks();
    Tid initial_tid() const { return initial_tid_; }
    const Trace& trace() const { return trace_; }
    StopWaiter& waiter() { return waiter_; }
    const ReplayOptions& options() const { return options_; }
    // The next time `task` is resumed, it is single-stepped.
    void request_step(Task& task) { task.step_on_resume = true; }
    // Until turned off, every resume of `task` is a single step.
    void set_single_stepping(Task& task, bool on) { task.single_stepping = on; }
    // A stopped copy of `task`'s process (fork), for throwaway execution.
    pid_t copy_process(Task& task);
    // Runs a syscall in `task` (stopped anywhere) and puts it back exactly as
    // it was. Returns the raw result; fills `child` with the new process of
    // a fork.
    int64_t inject_syscall(Task& task, long nr, const std::array<uint64_t, 6>& args, pid_t* child = nullptr);
    // While a syscall of rewind's own runs in a task (a snapshot's fork, a
    // page collapse): no stop then is the program's.
    bool injecting() const { return injecting_; }

    // Snapshots: a copy of every replayed process (fork), stopped, plus the
    // replayer's bookkeeping. Taking one needs every task stopped outside a
    // syscall that runs for real and without a signal about to be handed over.
    // `on_disk`: for a landmark, whose state on disk does not hold where
    // threads of a parallel trace are inside synchronization calls.
    bool can_snapshot(std::string* why = nullptr, bool on_disk = false);
    // `huge_pages`: collapse large regions first, which makes this and
    // later forks cheaper but costs a copy of what was written since.
    std::unique_ptr<ReplaySnapshot> take_snapshot(bool huge_pages = true);
    // Replaces the replayed world by a copy of the snapshot (which stays usable).
    void restore(const ReplaySnapshot& snapshot);
    // The pages t's process still shares with the snapshot it was restored
    // from, copied now: a run timed after this is not slowed by copying them
    // at its first writes, and takes what the recorded run took. Returns
    // the bytes copied.
    uint64_t copy_shared_pages(Task& t);
    // The trace files mounted in the replay's mount namespace, in order.
    const std::vector<MountedFile>& mounted_files() const { return mounted_; }
    // The trace's copies of those files, checked (throws ReplayError).
    std::vector<BindMount> binds_of(const std::vector<MountedFile>& files) const;
    // The trace's copies an exec maps (absolute paths, one per path), to bind-mount.
    static std::vector<MountedFile> mapped_copies(const ExecEvent& e);
    // Re-emits the program's output only from event `index` on (a replay
    // started from a landmark before the position asked for).
    void echo_from(uint64_t index) { echo_from_ = index; }

private:
    // One handler per event kind (replayer.cpp, replay_syscall.cpp, replay_signal.cpp).
    void dispatch(const IndexedEvent& e);
    void on_exec(const ExecEvent& e);
    void on_fork(const ForkEvent& e);
    // The call that created `child`, as the replayed parent makes it: the
    // recording ended while the parent was still inside it.
    // CLONE_UNTRACED off for the call that creates a task (where its flags are), and back on.
    std::optional<uint64_t> clear_clone_untraced(Task& parent, const SyscallEvent& call);
    void restore_clone_untraced(Task& parent, uint64_t at, pid_t child, bool same_memory);
    SyscallEvent unfinished_clone(Task& parent, Tid child);
    void on_exit(const ExitEvent& e);
    void apply_mapped_write(Task& t, const SyscallEvent& e);
    void on_syscall(const SyscallEvent& e);
    void on_signal(const SignalEvent& e);
    void on_rdtsc(const RdtscEvent& e);
    void on_random(const RandomEvent& e);
    void adopt_scratch_registers(Task& t, const Registers& recorded);
    std::set<uint64_t> warned_random_breakpoints_; // rdrand/rdseed addresses a debugger has a breakpoint on
    void on_note(const NoteEvent& e);
    void on_preempt(const PreemptEvent& e);
    void on_sync(const SyncEvent& e);

    // Traces recorded with --parallel (replay_sync.cpp).
    static constexpr int64_t kNotReturned = SyncCallState::kNotReturned;
    bool parallel_trace() const { return parallel_; }
    // A recorded futex made inside a synchronization call: contention made
    // it, and the replay has its own.
    bool skipped_in_parallel(const SyscallEvent& e) const;
    std::string other_threads_last_events(Tid tid) const;
    std::string stuck_details(Tid tid) const;
    void reach_sync_entry(Task& t, const SyncEvent& e);
    // The engine's int3 at `addr`, or the debugger's if it has one there.
    void plant_engine_trap(std::optional<perfclock::InstructionTrap>& trap, Task& t, uint64_t addr);
    bool completes_round_later(const SyncEvent& e);
    SyncCallState entered_call(Task& t, const SyncEvent& e); // at its entry
    static bool is_try_acquire(uint32_t fn);
    // Calls run ahead of their place, where the place (a release's entry,
    // an acquire's return) is not where its effect was (replay_sync.cpp).
    void run_failed_tries_first(const SyncEvent& release);
    void run_acquires_first(const SyncEvent& failed_try);
    void run_next_calls_early(Tid except, uint64_t object, const std::function<bool(const SyncEvent&)>& which);
    bool waits_for_deferred(Task& t);
    void run_deferred_calls(const SyncEvent& leaving); // before a thread leaves the same object

    bool run_sync_call(Task& t, SyncCallState& call);                     // false: it blocks
    bool step_sync_call(Task& t, SyncCallState& call, const StopInfo& s); // false: it returned
    void finish_sync_call(Task& t, const SyncEvent& e, SyncCallState& call);
    void finish_pending_sync(Task& t);
    // The end of a futex wait inside a call; `timed_out`: the call's
    // recorded outcome is a timeout, which ends a wait still asleep.
    StopInfo wait_woken(Task& t, const SyncCallState& call, bool timed_out);
    // Wakes whoever sleeps on `word` with a FUTEX_WAKE made by another
    // thread of t's process that is stopped (none: nobody is woken).
    void wake_sleepers_on(Task& t, uint64_t word);
    // Sleepers parked so that a wake-up reaches the thread whose turn it
    // is (wait_woken); they go back to sleep once its call has returned.
    std::vector<Tid> held_out_;
    void release_held_out();
    static bool recorded_timeout(const SyncEvent& e);
    // A recorded futex wait that timed out inside a condition wait
    // (replay_sync_timeout.cpp): the wait ends there, and the waiter is
    // stepped to the instruction that takes its mutex back.
    void on_recorded_timeout(const SyscallEvent& e);
    StopInfo time_out_wait(Task& t, const std::string& what);
    void step_to_mutex_lock(Task& t, SyncCallState& call);
    // A futex wait where the recording has another syscall (parallel traces).
    bool unrecorded_wait(Task& t, const SyscallEvent& e);
    static constexpr int kUnrecordedWaits = 1000;
    // Lets condition waiters that were woken and stopped in their call give
    // up their hold on `watched`, which a signaller sleeps on; true if one moved.
    bool advance_woken_sync_calls(Tid except, uint64_t watched);
    void step_until_released(Task& u, SyncCallState& call, uint64_t watched);
    // A futex met while a thread is stepped through a call (at its entry
    // stop `entry`) runs for real: false if the thread sleeps in it (then
    // blocked), true at its exit.
    bool run_futex_while_stepping(Task& t, SyncCallState& call, const StopInfo& entry);
    void check_sync_result(Task& t, const SyncEvent& e, const SyncCallState& call);
    std::map<Tid, SyncCallState> in_sync_call_;
    // A thread asleep in a synchronization call's futex, which nothing
    // wakes before the replay goes on: parked for a snapshot, it is copied.
    bool stable_sleeper(Task& t);
    bool is_parked(Tid recorded_tid) const;
    bool park_sleeper(Tid tid, const SyncCallState& call); // true: it was asleep and is parked now
    struct ParkedSleeper {
        Tid recorded_tid = 0; // interrupted in its wait, which it restarts
    };
    std::vector<ParkedSleeper> parked_;
    const perfclock::InstructionTrap* sync_trap_ = nullptr;       // the engine's int3 at a synchronization call
    std::map<Tid, std::pair<uint64_t, std::string>> last_events_; // recorded tid -> index, what
    // A SIGTRAP of the thread being run to a preemption point, at its
    // instruction: checks that execution (true), whichever trap it was.
    // A recorded tracer's request that changed its tracee (replay_tracer.cpp).
    void apply_tracer_request(Task& tracer, const SyscallEvent& e);
    void apply_process_write(Task& writer, const SyscallEvent& e); // kSyscallWroteProcess
    // A stop of `t` that is a group stop the recording left without a
    // SIGCONT (a recorded tracer resumed it): resumed `how`, its next stop.
    bool skipped_by_sigkill(const SyscallEvent& e); // an exit syscall that never ran
    StopInfo past_group_stop(Task& t, StopInfo s, Resume how, const std::string& what);
    bool faults_at_point(Task& t, const StopInfo& stop, const PreemptEvent& e);
    bool preempt_point_trap(Task& t, const StopInfo& stop);

    // Launching and exec.
    void launch(const ExecEvent& first);
    std::vector<BindMount> binds_for(const ExecEvent& e, bool skip_mounted = false) const;
    // The trace's copy of a file, checked against its content hash; throws
    // ReplayError (Damaged) naming the file otherwise.
    std::string checked_copy(Tid tid, const std::string& content_hash, const std::string& path) const;
    void check_exec_image(Task& t, const ExecEvent& e);
    // The exec call of a process that runs already, to its entry, checked,
    // and what it names prepared (replay_exec.cpp).
    void enter_exec(Task& t, const ExecEvent& e);
    void open_exec_descriptor(Task& t, const ExecEvent& e, const DescriptorRoute& route);
    void reach_relative_exec(Task& t, const ExecEvent& e, const std::string& name);
    // The mapping of the program an exec loaded, with the trace's copy of it.
    static const Mapping* exec_image(const ExecEvent& e);
    // The other threads of a process that execs (replay_exec_threads.cpp).
    const ExecEvent* exec_ahead(Task& t);            // the exec of t's process, near in the stream
    bool ended_by_exec(Task& t, const ExitEvent& e); // t's recorded end was a sibling's exec
    std::vector<Task*> siblings_ended_by_exec(Task& caller);
    StopInfo wait_exec_stop(Task& caller, const ExecEvent& e); // and the caller takes the leader's id
    void collect_ended_by_exec(const std::vector<Task*>& ended, const ExecEvent& e);
    void forget_calls_of(Tid recorded); // synchronization calls a thread that ends was in
    // A leader that ends before its threads: a zombie ptrace says nothing of
    // until its process ends, when its status is collected.
    bool leaves_threads_behind(Task& t, const ExitEvent& e);
    void end_as_zombie(Task& t, const ExitEvent& e);
    void collect_zombie_leader(Task& last);
    std::map<Tid, pid_t> zombie_leaders_;        // recorded tgid -> the zombie's tid
    std::vector<std::unique_ptr<Task>> retired_; // leaders whose id an exec'ing thread took

    // Syscalls.
    void emulate(Task& t, const SyscallEvent& e);
    // Syscalls served through seccomp notifications (replay_notified.cpp).
    bool serve_by_notification(Task& t, const SyscallEvent& e);
    // `beginning`: a run of them, which must be long enough to pay.
    bool may_serve_by_notification(Task& t, const SyscallEvent& e, bool beginning);
    bool notification_matches(Task& t, const SyscallNotification& call, const SyscallEvent& e);
    void install_notifier(Task& t);
    void leave_notified_run(Task& t);
    void forget_notified_run(); // (its thread is gone)
    // `t` waits in a notification it was not answered: back before its syscall.
    void hand_over(Task& t);
    // The notified thread's next call or stop; its interrupt sent on time.
    StopWaiter::Arrival wait_call_or_stop(Task& t);
    [[noreturn]] void report_stuck(Task& t, const std::string& waiting_for);
    void settle_notified_run();
    // The syscall agent (syscall_agent.h) within notified runs
    // (replay_agent.cpp): the next arrival of the run's thread, after the
    // calls the agent answered, which are then replayed without it.
    StopWaiter::Arrival run_arrival(Task& t);
    bool agent_allowed();
    void prepare_agent(Task& t, const SyscallEvent& e);
    void load_agent(Task& t);
    void retire_agent(Task& t);
    void finish_agent_answer(Task& t, const StopInfo& s);
    void keep_agent_clear(Task& t, const SyscallEvent& e); // of a mapping the call makes
    uint64_t agent_until_ = 0;                             // events before it: answered by the agent
    std::optional<StopWaiter::Arrival> agent_arrival_;     // what came after them
    void execute(Task& t, const SyscallEvent& e, ReplayAction action);
    void replay_mmap(Task& t, const SyscallEvent& e);
    // Runs the call the thread is at the entry of with these argument
    // registers changed; diverges unless it returns what the recording did.
    void run_entered_call_as(Task& t, const SyscallEvent& e,
                             std::initializer_list<std::pair<Registers::Index, uint64_t>> changed);
    void attach_segment(Task& t, const SyscallEvent& e); // replay_sysv_shm.cpp
    void note_segment_made(const SyscallEvent& e);       // a shmget's success
    void finish_executing_call(Task& t, const SyscallEvent& e);
    // The thread was killed in its call before it returned (the recording
    // shows the return, then its death by SIGKILL).
    bool killed_before_return(Task& t);
    void apply_child_return(Task& t, const SyscallEvent& e);
    void store_recorded_tid(Task& t, uint64_t addr, Tid recorded);
    void run_to_syscall_entry(Task& t, const SyscallEvent& e, Resume how);
    void check_call(Task& t, const SyscallEvent& e);
    void restore_unused_arguments(Task& t, const SyscallEvent& e, size_t used);
    void check_inputs(Task& t, const SyscallEvent& e);
    void check_outputs_match(Task& t, const SyscallEvent& e);
    void write_outputs(Task& t, const SyscallEvent& e);
    void write_recorded_result(Task& t, const SyscallEvent& e); // the bytes it wrote, and its return value
    void set_result(Task& t, const SyscallEvent& e);
    void after_syscall(Task& t, const SyscallEvent& e);
    void echo(Task& t, const SyscallEvent& e);

    // Signals.
    void deliver_signal(Task& t, const SignalEvent& e);
    void pass_to_restart(Task& t, const SignalEvent& e);
    // A signal the kernel forced on the thread (a seccomp filter's trap or
    // kill): blocked or ignored, it takes its default action, the kernel
    // resetting the action and unblocking it first; `always`, whatever it
    // was (a kill). Done to the replayed thread before the signal is sent.
    void force_default_action(Task& t, int signo, bool always);
    void enter_handler_under_wait_mask(Task& t, int signo, uint64_t own_mask);
    void reach_position(Task& t, const SignalEvent& e);
    bool at_signal_point(Task& t, const SignalEvent& e);
    // The point is a `loop` to itself: the thread is taken to its first
    // execution and its count set to the recorded one, if that is where
    // the search would stop. Returns whether the thread stands at the point.
    bool reach_position_in_self_loop(Task& t, const SignalEvent& e);
    void reach_position_by_int3(Task& t, const SignalEvent& e);
    [[noreturn]] void position_search_stuck(Task& t, const SignalEvent& e, uint64_t executions);
    // Where the debug registers do not work, the engine finds its positions
    // with its own int3 (0: none); its traps and the steps over it are not
    // a debugger's. A trap's stop is put back onto the instruction.
    uint64_t engine_int3_ = 0;
    bool engine_step_ = false;
    // While it lives, the traps of single steps are the engine's.
    struct EngineSteps {
        bool& flag;
        explicit EngineSteps(bool& f) : flag(f) { flag = true; }
        ~EngineSteps() { flag = false; }
        EngineSteps(const EngineSteps&) = delete;
        EngineSteps& operator=(const EngineSteps&) = delete;
    };
    bool claim_engine_int3(Task& t, const StopInfo& stop);
    void step_over_engine_int3(Task& t, perfclock::InstructionTrap& trap);
    void check_registers(Task& t, const Registers& expected, const std::string& what);
    // A sibling of t holding the signal t's recorded death names, to deliver.
    Task* sibling_delivering(Task& t, int exit_code);
    // The exit of a sibling that ends t's process with exit_group, when it
    // is near in the stream (the kernel may report the exits it caused
    // first), and that exit run ahead of the stream (see on_exit).
    const ExitEvent* group_exit_ahead(Task& t);
    void run_group_exit_ahead(Task& t);

    // Tasks and stops.
    Task& task(Tid recorded_tid);
    Task& add_task(pid_t tid, Tid recorded_tid, std::shared_ptr<ThreadGroup> group, std::shared_ptr<AddressSpace> vm);
    StopInfo wait_stop(Task& t, const std::string& waiting_for);
    void resume(Task& t, Resume how, bool step = false);
    pid_t fork_copy(Task& t);
    // Gives (keep_out) or lifts the advice that keeps memory out of forks.
    void advise_forks(Task& t, const std::vector<ForkAdvice>& advice, bool keep_out);
    Task& forker_of(ThreadGroup& group); // the thread whose fork copies its process
    void remake_thread(Task& forker, const ReplaySnapshot::TaskCopy& copy, std::shared_ptr<ThreadGroup> group,
                       std::shared_ptr<AddressSpace> vm);
    void use_huge_pages(Task& t);
    void restore_process_settings(Task& t);
    void kill_world();
    uint64_t find_syscall_insn(Task& t);
    void collect_fresh(Task& t);
    void remove_task(Task& t);

    [[noreturn]] void diverge(Task& t, std::string what, std::string details = {});
    [[noreturn]] void refuse(Tid tid, std::string what, std::string details = {});
    std::string describe_stop(Task& t, const StopInfo& s);

    const Trace& trace_;
    ReplayOptions options_;
    DebugHook* hook_ = nullptr;
    EventSource source_;
    const bool parallel_; // recorded with --parallel
    bool injecting_ = false;
    // While it lives, the syscalls tasks make are rewind's own.
    struct OwnCalls {
        bool& flag;
        bool was;
        explicit OwnCalls(bool& f) : flag(f), was(f) { flag = true; }
        ~OwnCalls() { flag = was; }
        OwnCalls(const OwnCalls&) = delete;
        OwnCalls& operator=(const OwnCalls&) = delete;
    };
    std::optional<OwnRdtscTrap> own_rdtsc_trap_; // constructed before any tracee exists
    StopWaiter waiter_;
    std::unique_ptr<SyscallNotifier> notifier_;
    bool notifier_tried_ = false;
    Task* notified_task_ = nullptr; // running between syscalls served by notification
    bool stepping_through_ = false;
    bool through_untrapped_ = false;
    uint64_t emulated_calls_ = 0, notified_calls_ = 0, agent_calls_ = 0; // for REWIND_DEBUG's summary
    uint64_t through_last_ = 0;
    std::chrono::steady_clock::time_point through_deadline_{};
    std::map<Tid, std::unique_ptr<Task>> tasks_; // by recorded tid
    std::map<Tid, StopInfo> finished_;           // recorded tid -> how its task ended
    // The replay's copies of mapped files, and the files the recording
    // changed while mapped (TraceEnd), whose private mappings use them too.
    MappedFileCopies mapped_files_;
    RecordedSegments recorded_segments_; // which the recording made (replay_limits.h)
    SysvSegments sysv_segments_;         // the replay's own for them
    std::set<FileIdentity> written_while_mapped_;
    // Files mapped shared and writable (TraceEnd); unknown: every shared
    // mapping is treated as if they were.
    std::optional<std::set<FileIdentity>> mapped_shared_writable_;
    std::vector<MountedFile> mounted_; // what launch and execs bind-mounted
    uint64_t echo_from_ = 0;
    void note_mounts(const ExecEvent& e);
    Tid initial_tid_ = 0;
    uint64_t current_ = 0; // index of the event being replayed
    int next_vm_id_ = 0;
    // 2 MiB-aligned addresses collapsed into huge pages once, by address
    // space id (kept across restores: a copy restored from an older snapshot
    // that lacks some only forks a little slower).
    std::map<int, std::set<uint64_t>> collapsed_;
    bool launched_ = false;
    bool warned_unechoed_ = false;
    // Output shown, by event index: once each. Not a high-water mark: events
    // do not always replay in index order (a child's first events can come
    // before its parent's clone returns), and a mark set by a later write
    // silenced make's line for an earlier one.
    std::vector<bool> echoed_;
    // An event is being replayed (a debugger stop inside it), and whether
    // replaying it again from the current state would be the same: true
    // while the only thing done so far is running towards its stop.
    std::optional<std::chrono::nanoseconds> interrupt_delay_; // counted from the task's next resume
    std::optional<std::chrono::steady_clock::time_point> interrupt_deadline_;
    pid_t interrupt_tid_ = 0;
    bool interrupt_sent_ = false; // a SIGSTOP of ours is on its way
    bool in_flight_ = false;
    Tid in_flight_tid_ = 0;
    struct PreemptSearch {
        pid_t tid = 0;
        const PreemptEvent* event = nullptr;
        uint64_t hits = 0, with_registers = 0;
        bool found = false;
        bool from_rest = false; // it stands at that instruction, not yet run
    };
    std::optional<PreemptSearch> preempt_search_; // while a thread runs to a preemption point
    bool restartable_ = false;                    // events before this index had their output shown
    std::chrono::steady_clock::time_point last_progress_{};
};

} // namespace rw::replay
