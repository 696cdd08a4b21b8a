// A debugging session over a replay: forward and reverse execution,
// breakpoints, watchpoints, snapshots, checkpoints, and inferior calls in
// throwaway copies. The debugger (the gdb server) is the frontend: the
// session hands it every stop and it answers with what to do next.
//
// Control flow. Forward execution runs the replay engine; a debugger stop
// inside the stretch between two events surfaces in the engine's wait loop
// as a DebugHook call, which asks the frontend (nested) and tells the
// engine to continue or single-step. Time travel never continues the
// current state: it unwinds to the session loop, restores the nearest
// snapshot and replays forward to the target position, which was found by
// re-executing from snapshots while collecting breakpoint hits (reverse
// continue) or single-stepping a short stretch (reverse step).
#pragma once

#include <chrono>
#include <functional>
#include <csignal>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "breakpoint_set.h"
#include "debug_log.h"
#include "debug_hook.h"
#include "execution_counter.h"
#include "step_trail.h"
#include "task_clock.h"
#include "register_file.h"
#include "position.h"
#include "replayer.h"
#include "snapshot_source.h"
#include "time_split.h"
#include "timeline.h"
#include "x86_insn.h"

namespace rw::replay {

struct StopReport {
    enum class Kind {
        Signal,        // a signal (the initial stop, a recorded signal, an interrupt)
        SoftwareBreak, // a breakpoint (int3)
        HardwareBreak, // a hardware breakpoint
        Watch,         // a watchpoint: watch_addr, watch_access
        Step,          // a single step ended
        ReplayBegin,   // reverse execution reached the start of the recording
        ReplayEnd,     // forward execution reached the end of the recording
        Exited,        // a diverted copy exited (exit_status, wait-status form)
        Exec,          // the debugged process exec'd: exec_path is its new program
    };
    Kind kind = Kind::Signal;
    Tid tid = 0;
    int signal = SIGTRAP;
    uint64_t watch_addr = 0;
    uint8_t watch_access = 1; // 1 write, 2 read/write
    int exit_status = 0;
    std::string exec_path;
    // Kind::Signal at a recorded signal: its siginfo as the kernel gave it
    // (gdb's $_siginfo: a fault's address, a sender's pid).
    std::optional<std::array<uint8_t, 128>> siginfo;
};

struct ResumeRequest {
    enum class Kind {
        Continue,
        Step,
        ReverseContinue,
        ReverseStep,
        GotoEvent,      // `value`: event index
        GotoPercent,    // `value`: 0..100
        GotoCheckpoint, // `value`: checkpoint id (0: the beginning)
        GotoPosition,   // `from`
        GotoEnd,        // just before the program's last exit
        Count,          // from `from` to `to`, counting executions of `addrs` and `writes` (the result: probe_result())
        Steps,          // single steps from `from` to `to` (the result: probe_result())
        Sample,         // from `from`, `value` anchors `span_ns` apart in running time (the result: probe_result())
        Label,          // `to` (anchored) as `from` and a breakpoint count (the result: probe_result())
        Query,          // from `from` (a boundary) to `to` (nullopt: the end), every execution of `addrs` and
                        // change of `writes`, with the registers there (the result: probe_result())
        SwitchFrontend, // serve `frontend` until it goes away, then the current one again
        Kill,           // end the session
    };
    ResumeRequest() = default;
    ResumeRequest(Kind k, uint64_t v = 0) : kind(k), value(v) {}
    Kind kind = Kind::Continue;
    uint64_t value = 0;
    int signal = 0;           // Continue/Step: a signal to deliver (code the debugger runs in a copy)
    Tid thread = 0;           // Step, ReverseStep: the thread that steps (0: the current one)
    bool only_thread = false; // Continue, Step: no other thread may run (gdb's scheduler-locking)
    std::optional<perfclock::Position> from, to;
    std::optional<perfclock::Segment> arrival;
    std::vector<uint64_t> addrs;
    std::vector<std::pair<uint64_t, uint32_t>> writes; // Count: the thread's writes to [addr, addr+len)
    std::vector<uint64_t> functions; // Query: entries among `addrs` whose calls' returns are noted too
    // Query: what a stop at an instruction notes besides the registers: xmm0-7, and the bytes
    // where each argument register points (bit 1 << (1 + i) for rdi, rsi, rdx, rcx, r8, r9).
    static constexpr uint32_t kWithXmm = 1;
    uint32_t query_with = 0;
    uint64_t most = 0; // Count: a cap on the writes counted to each (0: the default); Steps: on the steps
    uint64_t span_ns = 0;
    class DebugFrontend* frontend = nullptr;
};

class DebugFrontend {
public:
    virtual ~DebugFrontend() = default;
    // Serves the debugger at a stop until it asks to resume.
    virtual ResumeRequest on_stop(const StopReport& report) = 0;
    // Polled while the replay runs: has the debugger asked to interrupt?
    virtual bool interrupt_requested() = 0;
    // Polled while the program runs between two events: has the debugger
    // gone away (then the session ends, without replaying on for nobody)?
    virtual bool gone() { return false; }
};

// Thrown to leave the current replay state for another point in time.
struct Travel {
    ResumeRequest request;
};

// Ends the session (the debugger killed the program or went away).
struct SessionEnd {};

// A position asked for that the recording does not have (a tool named an
// execution count past the next event): the session goes back to where it was.
struct NoSuchPosition : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class DebugSession : public DebugHook {
public:
    DebugSession(const Trace& trace, ReplayOptions options);
    ~DebugSession() override;

    // Replays to the program's first instruction, then serves the frontend
    // until it kills the session. Throws ReplayError on divergence.
    void run(DebugFrontend& frontend);
    // Debug this recorded process instead of the first (before run()): the
    // session begins at its first instruction after its first exec, or after
    // its fork if it never execs; the rest of the tree replays around it.
    void debug_process(Tid pid) { process_to_debug_ = pid; }
    // Persistent landmarks the session may start from (before run()).
    void use_landmarks(std::unique_ptr<SnapshotSource> landmarks) { landmarks_ = std::move(landmarks); }
    // The first stop the debugger sees is there instead of the program's
    // first instruction (before run(); GotoPercent, GotoEvent or GotoPosition).
    void start_at(const ResumeRequest& r) { start_at_ = r; }

    // ---- what the frontend may ask while the program is stopped --------
    Tid current_thread() const { return current_tid_; }
    std::vector<Tid> threads();
    bool has_thread(Tid tid);
    Registers registers(Tid tid);
    void write_registers(Tid tid, const RegisterFile& regs); // in a throwaway copy
    size_t read_memory(uint64_t addr, std::span<uint8_t> out);
    bool write_memory(uint64_t addr, std::span<const uint8_t> data); // in a throwaway copy
    pid_t process_of(Tid tid);                                       // the live process gdb's thread stands for
    bool diverted() const { return diversion_ != nullptr; }
    // Snapshots the timeline let go because memory was short.
    size_t snapshots_let_go() const { return timeline_.released_for_memory(); }
    // The anchors of these positions go last where memory is short.
    void hold_anchors(const std::vector<perfclock::Position>& positions);
    std::string snapshot_gone(const perfclock::Position& anchored) const; // the message where it is
    BreakpointSet& breakpoints() { return breakpoints_; }
    const ExecEvent& program() const { return program_; }
    const Trace& trace() const { return trace_; }
    const perfclock::Position& position() const { return position_; }
    std::string describe_position();
    uint64_t total_events() const;
    const perfclock::Position& beginning() const { return begin_; }
    std::optional<Event> event(uint64_t index) { return event_at(index); }
    // The debugged process's running time at each position (rw-split):
    // one pass over the events the first time, again when the debugged
    // process changes.
    const perfclock::RunningTimes& running_times();
    Tid debugged_process() const { return debugged_tgid_; }
    // What the last Count or Steps request found, as JSON.
    const std::string& probe_result() const { return probe_result_; }
    // Why the last move in time could not be made (empty: it was).
    const std::string& travel_error() const { return travel_error_; }
    void clear_travel_error() { travel_error_.clear(); }

    // Passing signals: reported only if the debugger wants to stop at them.
    void set_passed_signals(std::set<int> signals) { passed_ = std::move(signals); }

    // Checkpoints (user snapshots). Returns the id, or throws ReplayError.
    uint64_t add_checkpoint();
    bool delete_checkpoint(uint64_t id);
    std::vector<std::pair<uint64_t, std::string>> list_checkpoints() const;

    // ---- DebugHook --------------------------------------------------------
    Then on_trap(Task& task, const siginfo_t& info) override;
    void on_signal(Task& task, const SignalEvent& signal) override;
    void on_event_point(Task& task) override;
    void on_interrupt(Task& task) override;
    void on_event_passed(uint64_t index) override;
    std::optional<uint8_t> byte_under_breakpoint(Task& task, uint64_t addr) override;
    bool traps_code(Task& task, uint64_t start, uint64_t end) override;
    bool watches_memory() override;
    void before_fork(Task& task) override;
    void after_fork(Task& task) override;

private:
    // While the program runs between two events, how often the session
    // looks whether the debugger is still there.
    static constexpr std::chrono::milliseconds kLookForDebuggerEvery{250};

    // What the session is doing with the engine.
    enum class Mode {
        Forward,  // running for the debugger: its breakpoints stop
        Seek,     // replaying to a position (the path's segments are armed in turn)
        Collect,  // replaying to a position, noting every breakpoint hit on the way
        Search,   // single-stepping from a position until an arrival condition
        Backstep, // replaying from a position with traps on the instructions that may precede an arrival
    };
    // What a seek does when it arrives: report, go on (retargeted), or single-step.
    enum class AfterArrival { Report, Continue, Step };
    // What is known of the state at a position, to find the instruction before it.
    struct Arrival {
        Registers regs;
        std::vector<uint64_t> before; // instructions that may have run just before
        // rcx and r11 are what a syscall instruction put there: the end of a
        // recording stands on its exit call, its registers rebuilt from the
        // call's entry, where the program's own rcx and r11 are lost.
        bool syscall_clobbered = false;
    };
    struct Hit {
        perfclock::Position pos;
        StopReport::Kind kind;
        uint64_t addr = 0;
        uint8_t access = 1;
        std::optional<Arrival> arrival; // watch hits: the state just after the write
    };
    struct Backstep {
        perfclock::Position base;
        perfclock::Segment arrival;
        std::vector<uint64_t> candidates;
        Arrival at_arrival;
        std::optional<perfclock::BreakpointCounter> arrival_counter;
        uint64_t arrival_offset = 0;
        std::vector<perfclock::BreakpointCounter> traps;
        std::vector<uint64_t> executions;
        // Instead of candidates: a watch on the stack slot the arrival's
        // return read, and where the thread stood after its last write.
        std::optional<uint64_t> slot;
        std::optional<perfclock::BreakpointCounter> slot_watch;
        uint64_t after_slot_write = 0;
        uint64_t resting = 0;
        bool resting_seen = false;
        bool verifying = false;
        perfclock::Position chosen;
        uint64_t stops = 0; // at candidates so far
        // A WriteMatchFilter stops the candidates (one or more) only where
        // they write the watched bytes: their counters say how often they ran.
        bool filtered = false;
    };
    // Executions of the candidates a filtered backstep goes through (the
    // debug exception alone each: 8.6 us on our reference VM) before it
    // gives up.
    static constexpr uint64_t kBackstepMostFiltered = 65536;
    struct BackstepDone {
        std::optional<perfclock::Position> found;
        uint64_t after_slot_write = 0;
    };
    struct CollectDone {};
    struct SearchDone {
        uint64_t steps;
    };

    StopReport start();
    StopReport start_attached(const TraceMeta::Attached& attached);
    StopReport execute();
    // The debugged process exec'd (the exec event just replayed): its new
    // program's history begins here (debug_exec.cpp).
    // Forward, the session stops there; a seek goes on, and the debugger
    // hears of the new program at the next stop.
    std::optional<StopReport> enter_new_program(const ExecEvent& exec);
    // Why a travel cannot be made on this machine ("" if it can).
    std::string travel_unavailable(const ResumeRequest& r) const;
    Then ask(const StopReport& report);
    Then handle_trap(Task& task, const siginfo_t& info); // on_trap, after the soft counters' look
    // A Count probe counting with int3s, or a label (a trap at each
    // execution), gives up at this many executions of one address: the
    // search that asked looks for a cheaper way.
    static constexpr uint64_t kSoftCountMost = 20000;
    // A label stops the thread at each execution to compare its registers
    // (a ptrace round trip: about 25 us where a debug register fires, 60 us
    // and more where an int3 and a step over it stand in): past this many,
    // the search gallops over the executions instead, at about log2(count /
    // limit) probes more than naming would have cost it. A probe (a restore,
    // a run, an evaluation) costs 10 ms and more: with debug registers a
    // few hundred milliseconds of naming at most save probes.
    // With a RegisterMatchFilter, an execution that does not match costs
    // the debug exception alone, in the kernel (8.6 us on our reference VM
    // against 25 us with a stop each), under the same limit: naming up to
    // 32,768 executions instead saved no probes (the executions it names
    // are bisected as the gallop's are) and cost more time where it failed.
    static constexpr uint64_t kLabelMost = 2000;
    static constexpr uint64_t kLabelMostByDebugRegister = 8192;
    static std::string fmt_count_cap(uint64_t addr, uint64_t most = kSoftCountMost);
    std::string fmt_write_cap() const;
    // Where int3s count, the replay needs its own int3 on the instruction
    // where the recording switched threads next: a counter there is refused
    // (NoSuchPosition, "counting stopped: …") rather than fought over.
    void refuse_count_at_switch_point(uint64_t addr);
    void apply_request(const ResumeRequest& r);
    void begin_travel(const ResumeRequest& r);
    // Probes for tools (debug_probe.cpp): Count, Steps, GotoEnd.
    void begin_probe(const ResumeRequest& r, const StopReport& report);
    std::optional<uint64_t> final_exit_event();
    void arm_probe_from(const perfclock::Segment& s);
    void start_probe();
    Then probe_trap(bool step, bool from_reached);
    Then label_trap(Task& task);
    void finish_probe();
    // Anchors, and how long the run took to reach each (microseconds).
    std::pair<std::vector<std::string>, std::vector<double>> sample(const perfclock::Position& from, uint64_t count,
                                                                    std::chrono::nanoseconds span);
    // The anchored position `anchored` as `from` and the count of executions of
    // the anchor's instruction, found by comparing registers at each of them.
    perfclock::Position label(const perfclock::Position& from, const perfclock::Position& anchored);

    // Positions and travel (debug_travel.cpp).
    StopReport seek(const perfclock::Position& target, const StopReport& report);
    void restore_for(const perfclock::Position& target);
    void arm_next_segment();
    void arm(const perfclock::Segment& s);
    Then segment_reached();
    bool at_event_segment() const; // a seek's armed segment is ToEvent, in its stretch
    std::optional<Hit> last_hit_before(const perfclock::Position& p);
    // The hits the last collect found, for the breakpoints it had: going
    // back from one of them (or from one reverse step before it, where gdb
    // goes first), the one before needs no collect again. gdb going back
    // through a conditional breakpoint asks hit by hit.
    struct CollectedHits {
        std::string breakpoints;
        std::vector<Hit> hits;
        size_t reported = 0;                           // the hit reverse execution went to last
        std::optional<perfclock::Position> stepped_to; // where one reverse step from it went
    };
    std::optional<Hit> cached_hit_before(const perfclock::Position& p);
    std::optional<CollectedHits> collected_;
    std::string breakpoints_key() const;
    std::optional<Hit> hit_at(const perfclock::Position& p) const; // a breakpoint's arrival, as a hit
    std::vector<Hit> collect(const Timeline::Entry& from, const perfclock::Position& to);
    std::optional<perfclock::Position> previous_instruction(const perfclock::Position& p,
                                                            const std::optional<Arrival>& at);
    // The same for one thread: it may have last run several events back.
    std::optional<perfclock::Position> previous_instruction_of(Tid tid, const perfclock::Position& p,
                                                               const std::optional<Arrival>& at);
    Tid thread_of_event(uint64_t index);
    std::optional<Arrival> arrival_here(); // the current state, as an Arrival

    // Backstep (debug_backstep.cpp).
    std::vector<uint64_t> candidates_before(const perfclock::Segment& arrival, Task& task);
    std::optional<perfclock::Position> backstep(const perfclock::Position& base, const perfclock::Segment& arrival,
                                                const std::vector<uint64_t>& candidates, const Arrival& at_arrival,
                                                std::optional<uint64_t> slot = std::nullopt);
    uint64_t after_slot_write_ = 0; // what the last backstep with a slot found
    // Where the function that returned to the arrival (just after a call)
    // began: the call's push of the return address is the last write to its
    // slot before the arrival, and stops at the callee's first instruction.
    // For calls whose destination the registers no longer tell (call *%rax).
    std::optional<uint64_t> callee_returning(const perfclock::Position& base, const perfclock::Segment& arrival,
                                             const Arrival& at_arrival);
    // backstep() over the candidates, as many at a time as debug registers allow.
    std::optional<perfclock::Position> backstep_in_rounds(const perfclock::Position& base,
                                                          const perfclock::Segment& arrival,
                                                          const std::vector<uint64_t>& candidates,
                                                          const Arrival& at_arrival);
    void begin_backstep();
    void filter_candidates(Task& task);
    Then backstep_trap(Task& task, const siginfo_t& info, bool step);
    uint64_t search_steps(const perfclock::Position& base, const perfclock::Segment& arrival);
    void begin_search();
    AfterArrival arrived();
    StopReport arrival_report(); // a seek arrived: what the debugger is told
    void retarget(const perfclock::Position& target);
    void continue_from(const perfclock::Position& snapshot);
    void rest_on(Task& task, uint64_t addr);
    void rest_after_restore();
    std::optional<Event> event_at(uint64_t index);
    perfclock::Position position_of_event(uint64_t index);

    void step_over(Task& task, uint64_t addr);
    void arm_soft_target(Task& task, uint64_t addr, uint64_t count);
    void insert_soft_target(Task& task);
    void remove_soft_target(Task& task);
    void disarm_targets();
    void end_step_over();
    static uint64_t resting_address(const perfclock::Position& p)
    {
        return !p.path.empty() && p.path.back().kind == perfclock::Segment::Kind::Break ? p.path.back().addr : 0;
    }

    // Snapshots.
    void maybe_snapshot_boundary();
    void snapshot_stop();
    void snapshot_here(Timeline::Kind kind);

    // Diversions (debug_diversion.cpp).
    void ensure_diversion();
    void end_diversion();
    bool diversion_restored();
    void leave_diversion_if_restored();
    StopReport run_diversion(bool step, int signal);

    // Helpers.
    Task* debugged_task(); // the thread the debugger looks at
    // The thread that runs from the current event boundary to the next
    // event. The replay runs one thread at a time, so the path of a
    // position (counted from its boundary) is this thread's alone.
    Task* runner();
    void stop_single_stepping();
    bool is_debugged(Task& t);
    bool at_end_of_history();
    // The stop to report if thread `runs_first` must run (`when`) while another is locked.
    std::optional<StopReport> locked_out(Tid runs_first, const std::string& when);
    StopReport stop(StopReport::Kind kind);

    const Trace& trace_;
    // Destroyed after the engine: the replayed world may be a copy of a
    // restored landmark, whose namespace ends with it.
    std::unique_ptr<SnapshotSource> landmarks_;
    Replayer engine_;
    std::optional<ResumeRequest> start_at_;
    DebugFrontend* frontend_ = nullptr;
    std::vector<DebugFrontend*> frontends_; // the ones waiting while another is served
    Timeline timeline_;
    BreakpointSet breakpoints_;
    perfclock::SoftCounters soft_counters_; // the int3s that count where debug registers do not
    ExecEvent program_;
    perfclock::Position position_;
    perfclock::Position begin_;
    Tid debugged_tgid_ = 0;
    Tid process_to_debug_ = 0; // 0: the recorded program
    // Returns a snapshot taken on the way (with its position), for when none
    // can be taken at the start itself (another process is in a blocking
    // syscall that runs for real).
    std::pair<perfclock::Position, std::unique_ptr<ReplaySnapshot>> replay_until_start_of(Tid pid);
    Tid current_tid_ = 0;
    std::set<int> passed_;

    Mode mode_ = Mode::Forward;
    // Seek/Collect/Search: where to go, and how far along its path we are.
    perfclock::Position target_;
    size_t segment_ = 0;                                        // index in target_.path of the armed segment
    perfclock::Segment current_;                                // what is armed (a Step may be the rest of one)
    uint64_t steps_left_ = 0;                                   // for a Step segment
    std::optional<perfclock::ExecutionCounter> target_counter_; // a Break target
    std::optional<perfclock::BreakpointCounter> target_watch_;  // a Watch target (debug registers only)
    uint64_t target_expected_ = 0;                              // the count at which a Break target arrives
    // A Break target reached after few executions is counted with an int3
    // instead: an instruction breakpoint near a hot loop slows the loop
    // (about 2.5x on the AMD machines measured), an int3 costs only its hits.
    struct SoftTarget {
        uint64_t addr = 0;
        uint64_t left = 0;
        uint8_t original = 0;
        pid_t pid = 0;
        bool stepping = false;
    } soft_target_;
    std::optional<StopReport> seek_report_; // reported when a Seek arrives
    // What to do on arrival of a Seek: report, or start a search.
    std::optional<perfclock::Segment> search_arrival_;
    std::unique_ptr<Backstep> backstep_; // set while a backstep replays towards its base
    // A tool's reverse step gives up past this many candidate executions
    // (each a stop) rather than take as long as it takes (0: no limit).
    uint64_t backstep_most_traps_ = 0;
    // What to do when a seek arrives (nothing set: report to the frontend).
    std::function<AfterArrival()> arrival_hook_;
    std::string probe_result_;
    std::string travel_error_;
    struct Probe {
        ResumeRequest::Kind kind = ResumeRequest::Kind::Count;
        perfclock::Position from;
        std::optional<perfclock::Segment> from_segment; // FROM beyond the prefix it shares with TO
        std::vector<uint64_t> addrs;
        std::optional<perfclock::ExecutionCounter> from_trap;
        uint64_t from_resting = 0;
        uint64_t steps_to_from = 0;
        bool started = false;
        std::chrono::steady_clock::time_point start;
        std::optional<perfclock::TaskClock> clock; // the thread's running time from the start
        std::vector<perfclock::ExecutionCounter> counters;
        std::vector<uint64_t> resting;
        std::vector<std::pair<uint64_t, uint32_t>> writes;
        std::vector<perfclock::BreakpointCounter> write_counters; // no stop at a write: the kernel counts it
        uint64_t writes_most = 0;
        uint64_t steps_most = 0; // 0: no cap
        uint64_t steps = 0;
        bool stepping() const { return steps_to_from > 0 || (started && kind == ResumeRequest::Kind::Steps); }
    };
    std::unique_ptr<Probe> probe_; // set while a Count or Steps probe runs
    struct Sampling {
        uint32_t run = 0;
        uint64_t wanted = 0;
        std::chrono::nanoseconds spacing{};
        uint64_t event = 0;
        std::vector<std::string> anchors;
        std::vector<double> ran_us; // each anchor's running time from the start, as it happened
        std::chrono::steady_clock::time_point started;
        // The thread's own running time, whose alarm stops it at each anchor
        // (absent where perf software events are not allowed: then the
        // tracer interrupts it by wall-clock time).
        std::optional<perfclock::TaskClock> clock;
        double clock_base_us = 0; // running time before the current clock started
    };
    std::unique_ptr<Sampling> sampling_;
    void arm_sampling_alarm(Task& task);
    double sampling_ran_us() const;  // the sampled thread's running time so far
    void copy_shared_pages(Task& t); // before a timed run (Replayer::copy_shared_pages)
    uint32_t sampling_runs_ = 0;
    struct SamplingDone {};
    struct Labelling {
        Registers want;
        uint64_t rip = 0;
        perfclock::Position from;
        uint64_t hits = 0;     // executions of rip so far, the trap's included
        uint64_t traps = 0;    // of them, those that stopped the thread
        uint64_t resting = 0;  // 1: the counter counted the execution the start rests on
        bool filtered = false; // a RegisterMatchFilter stops the thread only where it matches
        bool skip_resting = false;
        std::optional<perfclock::ExecutionCounter> trap;
    };
    std::unique_ptr<Labelling> labelling_;
    // A whole-recording query (debug_query.cpp): one collect whose hits
    // are noted with the thread's state there.
    struct Query {
        std::vector<std::pair<uint64_t, uint32_t>> watched; // pieces of the bytes whose changes are noted
        uint64_t first_event = 0; // hits before it are the snapshot's run up to FROM, not the query's
        uint64_t most = 0;
        size_t noted = 0;                         // of hits_
        uint64_t noted_records = 0;               // records that count against `most` (returns do not)
        std::vector<std::string> records;         // JSON objects, in time order
        std::optional<std::vector<uint8_t>> last; // the watched bytes as last seen (nullopt: unreadable)
        bool full = false;
        uint32_t with = 0;            // ResumeRequest::query_with
        std::set<uint64_t> asked;     // the instructions asked about
        std::set<uint64_t> functions; // of them, entries whose calls' returns are noted
        std::set<uint64_t> returns;   // return addresses stopped at for them
        struct Call {
            Tid tid;
            uint64_t rsp_after; // the stack pointer its return leaves
            size_t record;      // its entry's index in records
            perfclock::Position entry;
            uint64_t return_address;
            uint64_t returns_before; // executions of the return address in the entry's stretch until then
        };
        std::vector<Call> pending;
    };
    bool note_query_return(Task& task, const Hit& h);
    bool add_query_record(std::string record); // false past `most` (the collect ends once no call is pending)
    std::unique_ptr<Query> query_;
    std::string run_query(const ResumeRequest& r);
    void note_query_hits(Task& task);
    void note_query_event();
    std::optional<std::vector<uint8_t>> read_watched(Task& task) const;
    std::unique_ptr<perfclock::RunningTimes> running_times_;
    struct LabelDone {
        perfclock::Position found;
    };
    std::optional<perfclock::Position> end_; // just before the program's last exit, once known
    X86Decoder decoder_;
    uint64_t search_steps_ = 0;
    StepTrail trail_; // the last search's steps
    std::optional<perfclock::BreakpointCounter> search_counter_;
    uint64_t search_counter_seen_ = 0;
    // Collect.
    std::vector<Hit> hits_;
    std::map<uint64_t, uint64_t> hit_counts_; // by address, since the segment started
    uint64_t stepping_over_ = 0;              // a software breakpoint lifted for one step
    uint64_t resting_on_ = 0;                 // the task is at this address, where its position's last Break arrived
    // Forward.
    bool step_pending_ = false;
    bool exec_unreported_ = false;     // the debugger has not heard of program_ yet
    bool history_begins_late_ = false; // at a child's start, or after an exec: not the recording's
    bool nearest_boundary_ok_ = false; // this seek (goto EVENT or PCT%) may end at the next reachable boundary
    Tid step_tid_ = 0;                 // the thread a pending step moves
    Tid locked_tid_ = 0;               // the only thread allowed to run (scheduler-locking), or 0

    std::chrono::steady_clock::time_point last_boundary_snapshot_{};
    std::optional<EventStreamReader> random_reader_; // events by index, for reverse steps

    struct Diversion {
        std::shared_ptr<ThreadGroup> group = std::make_shared<ThreadGroup>();
        std::shared_ptr<AddressSpace> vm = std::make_shared<AddressSpace>();
        std::unique_ptr<Task> task;
        Registers start; // the replay's registers when the diversion began
        bool exited = false;
        int exit_status = 0;
        bool in_syscall = false;
        bool unrun_writes = false; // memory written since the copy last ran
        std::set<long> warned;     // syscalls refused to the copy, said once
    };
    std::unique_ptr<Diversion> diversion_;
};

} // namespace rw::replay
