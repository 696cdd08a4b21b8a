// The ptrace half of recording. The program runs under PTRACE_CONT (no
// per-syscall stops); the supervisor only sees what eBPF cannot capture:
// signals, rdtsc traps, exec, new tasks, and stalls the kernel side hands
// over.
//
// Asynchronous signals are delivered only at syscall boundaries, so replay
// can deliver them at the same point:
//  - one that arrives while the thread is leaving a syscall (orig_rax >= 0 at
//    the delivery stop) is delivered at once, anchored to that syscall;
//  - one that interrupts user code is suppressed and the thread resumed with
//    PTRACE_SYSCALL; at its next syscall entry the signal is re-sent, and
//    delivered when that syscall exits;
//  - a thread that makes no syscall within the fallback delay is
//    interrupted and the signal delivered where it stands; the event then
//    records the full register state of that point (SignalKind::AtPosition).
//
// The threads of a multithreaded process run one at a time under the
// ThreadScheduler (supervisor_threads.cpp). They run under PTRACE_CONT as
// well: the kernel side reports the entries of calls that may block and
// stops the thread when such a call returns.
#pragma once

#include <sys/ptrace.h>
#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "emulated_tracing.h"
#include "env_scrub.h"
#include "event.h"
#include "hw_breakpoint.h"
#include "rewind_abi.h"
#include "memory_groups.h"
#include "thread_scheduler.h"
#include "written_pages.h"

namespace rw {

// The supervisor's options as the tracer of every recorded thread.
// TRACESECCOMP: the recording filter's stops (recording_filter.h).
inline constexpr long kRecordingPtraceOptions = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
                                                PTRACE_O_TRACEEXEC | PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACESECCOMP |
                                                PTRACE_O_EXITKILL;
// Options of a recorded tracer that the supervisor sets on the tracee for
// real, beside its own: the stops they add are the tracer's.
inline constexpr long kRealTracerOptions = PTRACE_O_TRACEEXIT | PTRACE_O_TRACEVFORKDONE;

class BpfCapture;
class EventAssembler;
class EventSink;
class FileStore;
class MappedFiles;
class RandomSites;

// A successful MAP_SHARED mmap: the kernel side stops the thread after it
// (RW_STALL_SHARED_MAP), for the supervisor to see who shares memory.
bool is_shared_mapping_call(const rw_rec_syscall& sc);

class Supervisor {
public:
    struct Options {
        std::chrono::milliseconds signal_fallback{10};
        std::chrono::milliseconds flush_interval{250};
        std::chrono::milliseconds time_slice{50}; // before a thread that others wait for is preempted
        bool chaos = false;                       // the next thread to run is picked at random
        bool parallel = false;                    // threads run freely (sync probes order them)
        bool wait_all = false;                    // record until every process exits, not only the initial one
        EnvScrub scrub_env;                       // environment entries the trace keeps as placeholders
        // Ends the trace with this event (a refusal's note): it is written
        // after every event before it, and nothing after it.
        std::function<void(Event last)> end_trace_with;
        // A process rewind attached to (rewind record --pid): SIGINT, SIGTERM
        // and SIGHUP to the recorder, or detach_at, end the recording by a
        // detach; undo_attach then takes back, in the stopped threads, what
        // the recording changed in them (Attachment::undo).
        bool attached = false;
        std::optional<std::chrono::steady_clock::time_point> detach_at;
        std::function<std::vector<std::string>(const std::vector<pid_t>&)> undo_attach;
        // A registration of rseq answered as made (owe_rseq): the area the
        // program believes registered, which the detach registers for real.
        std::function<void(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig)> rseq_answered;
        // The flight recorder (record --window): when `roll_due` says so,
        // every thread of the attached process is stopped outside any
        // syscall, with every event before that point emitted, and
        // `roll_over` takes a start image there (`stopped`: each thread, with
        // the call a restart_syscall continues, or -1; the one that had the
        // CPU first). What it returns runs once the threads run again, told
        // how long they were stopped.
        // `roll_missed` is told why one could not be taken then.
        std::function<bool()> roll_due;
        std::function<std::function<void(std::chrono::duration<double> paused)>(
            Tid tgid, const std::vector<std::pair<pid_t, int>>& stopped)>
            roll_over;
        std::function<void(const std::string& why)> roll_missed;
        // This signal to the recorder calls `freeze` (the flight recorder
        // writes its window out as a trace of its own and goes on).
        int freeze_signal = 0;
        std::function<void()> freeze;
    };

    // The program did something rewind cannot record, and the recording
    // stopped there (supervisor_refusal.cpp).
    struct Refusal {
        Tid tid = 0;
        std::string why;
        uint64_t seq = 0; // of the note that ends the trace
    };

    Supervisor(BpfCapture& capture, EventAssembler& assembler, EventSink& sink, MappedFiles& files,
               RandomSites& random_sites, const Options& options);

    // Threads of a running process, recorded from now on (rewind record
    // --pid): every one ptrace-stopped outside any syscall, the leader
    // first. Before run(initial = tgid).
    void adopt(Tid tgid, const std::vector<Tid>& tids) { adopt_tree({{tgid, tids}}, {}); }
    // The same for processes attached together (--tree), the first one
    // the one run() is given; `shared`: the writable objects each maps
    // shared, by which processes that share memory are scheduled as one
    // (memory_groups.h).
    void adopt_tree(const std::vector<std::pair<Tid, std::vector<Tid>>>& processes,
                    const std::vector<std::pair<Tid, FileIdentity>>& shared);
    // A thread of the attached process that was starting when rewind
    // attached, made by a thread that had rseq then: glibc's thread start
    // treats a failed registration as fatal (it inherits "rseq works" from
    // its creator), so its registration is answered as made (and undone,
    // as for the threads registered before the attach).
    void owe_rseq(Tid tid) { rseq_owed_.insert(tid); }
    // The recording ended by a detach: the processes run on without rewind.
    bool detached() const { return detached_; }
    // Signals sent to the recorder stand for the detach (request_detach).
    void request_detach() { detach_requested_ = true; }

    // Runs until no traced task is left; returns the wait status of `initial`.
    // Unless Options::wait_all, the processes still running when the
    // initial process has exited are killed then (killed_at_exit()).
    int run(pid_t initial, const std::function<void()>& periodic);
    uint64_t killed_at_exit() const { return killed_at_exit_; }
    const std::optional<Refusal>& refusal() const { return refusal_; }

    const std::vector<std::string>& problems() const { return problems_; }
    uint64_t stalls() const { return stalls_; }
    uint64_t rdtsc_traps() const { return rdtsc_traps_; }
    uint64_t random_traps() const { return random_traps_; }
    uint64_t deferred_signals() const { return deferred_signals_; }
    // Serialized processes: CPU hand-overs at syscalls that may block, and
    // at the exit of a syscall of a thread past its time slice.
    uint64_t yields() const { return yields_; }
    uint64_t stops() const { return stops_; } // ptrace stops handled (exits not counted)
    uint64_t syscall_handovers() const { return syscall_handovers_; }

private:
    // A call the supervisor answers itself: the call runs and fails without
    // effect, and at its return gets this result and these outputs.
    struct AnsweredCall {
        int64_t ret = 0;
        std::vector<MemoryRange> inputs; // what it read of the caller's memory
        std::vector<MemoryRange> outputs;
        int restore_arg = -1; // an argument changed to make the call fail, and its value
        uint64_t restore_value = 0;
    };

    struct Thread {
        Tid tid = 0;
        Tid tgid = 0;
        bool syscall_stops = false;           // resumed with PTRACE_SYSCALL
        bool step_next = false;               // resumed once with PTRACE_SINGLESTEP (a recorded tracer's)
        std::vector<siginfo_t> deferred;      // waiting for a syscall boundary
        std::vector<siginfo_t> resent;        // re-sent, awaiting delivery
        std::optional<bool> namespace_init;   // its process is a PID namespace's init (asked once)
        bool at_position = false;             // delivery falls back to a user position
        Registers position;                   // … this one
        std::vector<uint64_t> position_pages; // … and the pages its round wrote
        std::chrono::steady_clock::time_point deadline{};
        // Looking for the next round of the loop it was interrupted in
        // (supervisor_signal_probe.cpp).
        std::unique_ptr<perfclock::BreakpointCounter> signal_probe;
        std::optional<WrittenPages> signal_written;
        std::chrono::steady_clock::time_point signal_probe_start{};
        bool signal_probe_tried = false;
        bool interrupt_requested = false;
        // Scheduling (serialized processes only).
        bool started = false; // its first stop was seen
        // Gave the CPU up at a syscall entry (RW_REC_YIELD) and has not had
        // it back: it runs user code again only in its turn.
        bool out_of_turn = false;
        // In a group stop the supervisor keeps with PTRACE_LISTEN (until
        // its next stop of any kind).
        bool listening = false;
        std::optional<int> parked_status;                    // a stop handled in its turn
        int parked_signal = 0;                               // resumed with this in its turn
        bool preempt_requested = false;                      // a PTRACE_INTERRUPT of ours is on its way
        std::unique_ptr<perfclock::BreakpointCounter> probe; // where a preemption lands
        std::chrono::steady_clock::time_point probe_deadline{};
        Registers probe_from;                // registers where the probe started
        std::optional<WrittenPages> written; // since the probe started
        // Tracing between recorded processes (supervisor_tracing.cpp).
        std::optional<AnsweredCall> answered;    // its current call's answer, given at its return
        bool waits_for_tracees = false;          // in a wait of the kernel's that a tracee's stop must end
        bool wake_requested = false;             // a PTRACE_INTERRUPT of ours ends that wait
        bool holds_wait = false;                 // held at a wait's entry until a tracee of its stops
        std::optional<Registers> preempted_at;   // where its last stop for a tracer in user code was recorded
        std::optional<uint64_t> preempted_after; // … after this syscall of its own
    };

    // The thread's entry, made if new (its tgid read from /proc unless given).
    Thread& thread(Tid tid, std::optional<Tid> tgid = std::nullopt);
    void on_stop(pid_t tid, int status);
    void on_ptrace_event(Thread& t, int event);
    void on_event_stop(Thread& t, int signal);
    void on_syscall_stop(Thread& t);
    void on_signal(Thread& t, int signo);
    void on_stall(Thread& t, const rw_stall& stall);
    void on_exec(Thread& t);
    // Refusing a program that traces processes itself (supervisor_refusal.cpp).
    void on_seccomp_stop(Thread& t);
    // Tracing between recorded processes (supervisor_tracing.cpp).
    void on_ptrace_call(Thread& t, const uint64_t (&args)[6]);
    void on_wait_call(Thread& t);
    void release_interrupted_waits(); // held waits a signal came for
    void answer(Thread& t, AnsweredCall call);
    bool finish_answered_call(Thread& t, const rw_stall& stall); // true: it was one
    bool stop_for_tracer(Thread& t, const siginfo_t& si, SignalKind kind, const Registers& regs);
    bool group_stop_for_tracer(Thread& t, int signo);
    // `signo`: the stop's signal (PTRACE_EVENT_STOP's).
    bool event_stop_for_tracer(Thread& t, int event, int signo = SIGTRAP);
    // A traced fork, vfork or clone the tracer's options ask to see: the
    // new task is traced too, and the parent stops for the tracer.
    bool fork_stop_for_tracer(Thread& parent, Thread& child, int event);
    bool birth_stop_for_tracer(Thread& t); // an auto-attached task's first stop
    void apply_pending_options(Thread& t, EmulatedTracee& tracee);
    bool listen_notice_for_tracer(Thread& t, int signo);
    bool syscall_stop_for_tracer(Thread& t); // its next syscall entry or exit, after PTRACE_SYSCALL
    void enter_tracer_stop(Thread& t, EmulatedTracee& tracee, EmulatedStop stop);
    // `syscall_stops`: PTRACE_SYSCALL, the tracee stops at its next
    // syscall's entry or exit.
    void continue_tracee(EmulatedTracee& tracee, int signo, bool syscall_stops = false);
    bool stops_alone(const Thread& t, int signo) const; // `signo` would stop `t`'s process, `t` alone
    void tell_tracer(const EmulatedTracee& tracee);
    bool forge_tracer_sigchld(Thread& t, const siginfo_t& si);
    void forget_tracing(Tid tid, int status); // thread `tid` ended with wait status `status`
    void trap_exec_for_tracer(Thread& t);     // the SIGTRAP an exec sends a tracee that is not seized
    void refuse_request(Thread& t, const std::string& request, const std::string& why);
    void refuse(Thread& t, std::string why);
    void on_stop_after_refusal(pid_t tid, int status);
    bool refusal_outlived();        // true: processes outlived SIGKILL for too long (said as a problem)
    void take_over_leader(Tid tid); // at an exec stop
    bool emulate_tsc(Thread& t);
    bool emulate_random(Thread& t);
    void resend_deferred(Thread& t);
    void inherit_sync_probes(Thread& child, Tid parent);
    void record_signal(Thread& t, const siginfo_t& info, SignalKind kind, const Registers& regs);
    // Held signals in user code (supervisor_signal_probe.cpp).
    // Plain: deliver where it stands; Resume: the probe (or a delivery) is
    // under way; HandedOver: a stop of the program's came and was handled.
    enum class SignalProbeStart { Plain, Resume, HandedOver };
    SignalProbeStart start_signal_probe(Thread& t, const Registers& regs);
    void end_signal_probe(Thread& t);
    bool signal_probe_running(Thread& t, std::chrono::steady_clock::time_point now);
    bool on_signal_probe_trap(Thread& t);
    void deliver_at_position(Thread& t, const Registers& regs, std::vector<uint64_t> pages);
    bool resume(Thread& t, int signo); // false: the thread is gone
    void check_deadlines();

    // Scheduling the threads of multithreaded processes (supervisor_threads.cpp).
    // The key `t` is scheduled under: its process's, or its group's if the
    // process shares memory with others (memory_groups.h).
    Tid key(const Thread& t) const { return groups_.key_of(t.tgid); }
    bool serialized(const Thread& t) const { return scheduler_.serialized(key(t)); }
    void serialize(Tid key, Tid runner);
    void unserialize(Tid key);
    void drain_ring(); // reads the ring, then hands on the CPU of threads that gave it up
    void take_yields();
    bool park_stop(Thread& t, int status); // true: handled in the thread's turn
    bool grant(Thread& t);                 // `t` has the CPU: it goes on; false if it is gone
    void on_new_thread_stop(Thread& t);
    void want_cpu(Thread& t);
    void give_up_cpu(Thread& t, bool steps_aside = false);
    void hand_over(Thread& t); // gives the CPU up where it stands, and waits for it again
    void run_next(Tid tgid, std::optional<Tid> next);
    void on_thread_gone(Tid tid, Tid tgid);
    // A fault that kills a namespace init natively: the thread is let go
    // (init_signals.h says why it would never die traced).
    void let_fault_kill(Thread& t);
    void take_exits();
    // Processes that share memory (supervisor_groups.cpp).
    void note_shared_mapping(Thread& t, const rw_rec_syscall& sc);
    void on_fork_event(Thread& parent, Thread& child, int event);
    bool hold_new_child(Thread& t); // true: it starts when its parent's fork event says how
    void start_child(Thread& t, bool joined);
    void release_children_of(Tid parent);
    // The one thread of these processes (nullptr if none, or several),
    // leaving out a new one whose first stop is still to come.
    Thread* lone_thread(const std::vector<Tid>& processes, const Thread* not_started = nullptr);
    // `stopped`: the thread whose call or fork made the merges, which the
    // supervisor holds stopped now.
    void merge_schedules(const std::vector<MemoryGroups::Merge>& merges, Thread& stopped,
                         const Thread* not_started = nullptr);
    void mark_serialized(Tid key);
    void check_slices();
    void start_preemption(Thread& t);
    void watch_round(Thread& t); // to the next execution of probe_from's instruction
    bool on_probe_trap(Thread& t);
    enum class StepProbe { Round, NoRound, HandedOver };
    // Single-steps `t` until `arrived` says so (Round), or `max_steps`, or a
    // syscall instruction comes (NoRound), or a stop of the program's, which
    // is handled as usual (HandedOver).
    // `hold_signals`: an asynchronous signal that comes meanwhile is held
    // (as on_signal holds one in user code) and the stepping goes on.
    StepProbe step_until(Thread& t, int max_steps, bool hold_signals,
                         const std::function<bool(const Registers&)>& arrived);
    bool hold_while_stepping(Thread& t, int status); // true: held
    void hold_signal(Thread& t, const siginfo_t& si);
    // `budget_preempts`: past the compute budget a thread is preempted
    // even when it makes progress (not for one that blocks SIGTRAP).
    void probe_by_stepping(Thread& t, bool budget_preempts);
    void preempt_here(Thread& t, std::optional<std::vector<uint64_t>> pages);
    // The CPU changes hands where `t` stands in user code: the point replay
    // runs it to before the others go on.
    void record_preemption(Thread& t, std::optional<std::vector<uint64_t>> pages);
    void emit(Event event);
    void problem(std::string message, Tid tid);

    BpfCapture& capture_;
    EventAssembler& assembler_;
    EventSink& sink_;
    MappedFiles& files_;
    RandomSites& random_sites_;
    Options options_;
    std::map<Tid, Thread> threads_;
    ThreadScheduler scheduler_;
    MemoryGroups groups_;
    EmulatedTracing tracing_;
    std::map<Tid, siginfo_t> tracer_sigchld_; // tracer process -> the SIGCHLD the kernel would have sent it
    std::map<Tid, Tid> held_children_;        // new processes at their first stop -> the parent they wait for
    std::map<Tid, bool> forks_seen_;          // new processes whose first stop is to come -> joined a group
    pid_t initial_ = -1;
    int initial_status_ = 0;
    uint64_t killed_at_exit_ = 0;
    void kill_the_rest();
    // The detach (supervisor_detach.cpp): no more events, every thread
    // stopped out of any syscall, the recording's changes taken back, let go.
    void detach_all();
    // Puts back and detaches these stopped threads (tgid_of names their
    // processes): part of detach_all.
    void let_go(std::vector<pid_t> stopped, const std::map<pid_t, Tid>& tgid_of);
    // A registration of rseq that succeeded (no recording filter: an
    // attached process) is undone, and answered ENOSYS.
    void refuse_rseq(Thread& t, rw_rec_syscall& sc);
    std::set<Tid> rseq_owed_;
    // Stops `t` for the detach; false if it is gone. Signals to deliver
    // after the detach are added to `later`.
    bool stop_for_detach(Thread& t, std::vector<std::pair<Tid, int>>& later);
    // `t` stands at a stop for `signo` that is rewind's own trap (an rdtsc,
    // an int3 of random_sites), set to run that instruction again: true.
    bool own_trap(Thread& t, int signo);
    // Every thread stopped (detaching_ set), as for the detach.
    struct Stopped {
        std::vector<pid_t> threads;             // in a ptrace stop, the newcomers too
        std::vector<pid_t> newcomers;           // made while the others were being stopped
        std::map<pid_t, Tid> tgid_of;           // of every one
        std::set<Tid> processes;                // theirs
        std::set<pid_t> vforked;                // newcomers a vfork made
        std::vector<std::pair<Tid, int>> later; // signals held from them, to send again
    };
    Stopped stop_everything();
    // A start image in the middle of the recording (supervisor_rollover.cpp):
    // why there cannot be one now, or "" once it is taken.
    std::string roll_over();
    std::string why_no_rollover() const;
    std::chrono::steady_clock::time_point next_roll_try_{};
    bool detach_requested_ = false;
    bool detached_ = false;
    // While detach_all stops the threads: no thread is given the CPU or
    // resumed (the ring drained then can report exits and yields that
    // would resume one; a stall completed then ends with a resume).
    bool detaching_ = false;
    std::optional<Refusal> refusal_;
    std::chrono::steady_clock::time_point refused_at_{};
    std::vector<std::string> problems_;
    uint64_t stalls_ = 0;
    uint64_t rdtsc_traps_ = 0;
    uint64_t random_traps_ = 0;
    uint64_t deferred_signals_ = 0;
    uint64_t refusals_seen_ = 0;
    uint64_t yields_ = 0;
    uint64_t stops_ = 0;
    uint64_t syscall_handovers_ = 0;
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    std::chrono::steady_clock::duration signal_probe_time_{}; // spent finding signal positions
};

} // namespace rw
