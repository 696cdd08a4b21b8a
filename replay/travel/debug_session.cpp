#include "debug_session.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdlib>
#include <cstring>

#include "event_format.h"
#include "hw_breakpoint.h"
#include "memory_headroom.h"
#include "process_tree.h"
#include "steady_now.h"

namespace rw::replay {
namespace {

// Forward replay time between automatic snapshots at event boundaries.
constexpr auto kBoundarySnapshotEvery = std::chrono::milliseconds(100);

} // namespace

DebugSession::DebugSession(const Trace& trace, ReplayOptions options)
    : trace_(trace), engine_(trace, options), timeline_([this] {
          uint64_t live = 0;
          for (pid_t pid : engine_.live_processes())
              live += anonymous_resident(pid);
          return memory_is_short(live);
      })
{
    // The engine's int3s at synchronization calls (parallel traces) and the
    // debugger's may be at one address: each shares the other's.
    breakpoints_.set_foreign_int3([this](uint64_t addr) { return engine_.engine_byte_under(addr); });
    soft_counters_.set_foreign_int3([this](uint64_t addr) { return engine_.engine_byte_under(addr); });
}

DebugSession::~DebugSession()
{
    if (diversion_)
        end_diversion();
    timeline_.clear();
}

// ---- the session loop ---------------------------------------------------

void DebugSession::run(DebugFrontend& frontend)
{
    frontend_ = &frontend;
    engine_.set_debug_hook(this);
    StopReport report = start();
    std::optional<ResumeRequest> travel = start_at_;
    perfclock::Position before_travel = position_;
    for (;;) {
        try {
            if (travel) {
                ResumeRequest r = *travel;
                travel.reset();
                if (std::string why = travel_unavailable(r); !why.empty()) {
                    // Refused before anything moved: the debugger stays
                    // where it is and is told why.
                    travel_error_ = why;
                    continue;
                }
                debug_log("travel %d from %s", static_cast<int>(r.kind), position_.describe().c_str());
                begin_travel(r); // sets up a seek; execute() gets there
                if (start_at_) {
                    // The program's output is shown from where the debugger starts.
                    engine_.echo_from(target_.event);
                    start_at_.reset();
                }
            } else {
                ask(report);
            }
            report = execute();
        } catch (const Travel& t) {
            travel = t.request;
            before_travel = position_;
            travel_error_.clear();
            probe_result_.clear();
            mode_ = Mode::Forward;
        } catch (const NoSuchPosition& e) {
            // Back to where the travel started; the frontend says why.
            debug_log("  no such position: %s", e.what());
            travel_error_ = e.what();
            ResumeRequest back{ResumeRequest::Kind::GotoPosition, 0};
            back.from = before_travel;
            travel = back;
            arrival_hook_ = nullptr;
            probe_.reset(); // (a count given up part-way)
            labelling_.reset();
            mode_ = Mode::Forward;
        } catch (const SessionEnd&) {
            if (frontends_.empty())
                return;
            // The other debugger is done: back to the waiting one, at the
            // position the other left (replayed again, to be in a clean state).
            if (diversion_)
                end_diversion();
            frontend_ = frontends_.back();
            frontends_.pop_back();
            ResumeRequest here{ResumeRequest::Kind::GotoPosition, 0};
            here.from = position_;
            travel = here;
            before_travel = position_;
            arrival_hook_ = nullptr;
            mode_ = Mode::Forward;
        }
    }
}

StopReport DebugSession::start()
{
    if (const auto& attached = trace_.meta().attached)
        return start_attached(*attached);
    const IndexedEvent* first = engine_.peek_next_event();
    // A stream that ends before its first event (truncated, corrupt, the
    // recorder killed): the step says so, as `rewind replay` does.
    if (!first)
        engine_.step();
    const ExecEvent* exec = first ? std::get_if<ExecEvent>(&first->event) : nullptr;
    if (!exec)
        throw ReplayError(ReplayErrorKind::Refused, 0, 0, "the trace does not start with the program's execve");
    program_ = *exec;
    debugged_tgid_ = exec->tgid;
    current_tid_ = exec->tid;
    // The exec, and the execve's return: the next instruction is the program's first.
    engine_.step();
    engine_.step();
    std::pair<perfclock::Position, std::unique_ptr<ReplaySnapshot>> on_the_way;
    if (process_to_debug_ && process_to_debug_ != exec->tgid)
        on_the_way = replay_until_start_of(process_to_debug_);
    position_ = begin_ = perfclock::Position{engine_.next_event_index(), {}};
    if (on_the_way.second && !engine_.can_snapshot())
        timeline_.add(Timeline::Kind::Beginning, on_the_way.first, std::move(on_the_way.second));
    else
        timeline_.add(Timeline::Kind::Beginning, begin_, engine_.take_snapshot());
    last_boundary_snapshot_ = steady_now();
    return stop(StopReport::Kind::Signal);
}

StopReport DebugSession::start_attached(const TraceMeta::Attached& attached)
{
    // The recording started in the middle of a running process: its start
    // image is the beginning, and nothing comes before it.
    if (!landmarks_)
        throw ReplayError(ReplayErrorKind::Refused, 0, attached.pid,
                          "the trace was recorded by attaching to a running process; its start image is needed");
    const Timeline::Entry* begin = nullptr;
    try {
        begin = &landmarks_->beginning(timeline_, engine_);
    } catch (const std::runtime_error& e) {
        throw ReplayError(ReplayErrorKind::Refused, 0, attached.pid, e.what());
    }
    engine_.restore(*begin->snapshot);
    // The process to debug is one of those attached (--tree: any of them).
    Tid pid = process_to_debug_ ? process_to_debug_ : attached.pid;
    const std::string* executable = pid == attached.pid ? &attached.executable : nullptr;
    const std::vector<uint64_t>* auxv = &attached.auxv;
    for (const auto& d : attached.descendants)
        if (d.pid == pid) {
            executable = &d.executable;
            auxv = &d.auxv;
        }
    if (!executable)
        throw ReplayError(ReplayErrorKind::Refused, 0, pid,
                          "process " + std::to_string(pid) +
                              " started after rewind attached: gdb debugs the processes that ran then "
                              "(rewind ps marks them attached)");
    program_ = ExecEvent{};
    program_.tid = program_.tgid = pid;
    program_.executable = program_.filename = *executable;
    program_.auxv = *auxv;
    debugged_tgid_ = current_tid_ = pid;
    position_ = begin_ = begin->pos;
    last_boundary_snapshot_ = steady_now();
    return stop(StopReport::Kind::Signal);
}

std::pair<perfclock::Position, std::unique_ptr<ReplaySnapshot>> DebugSession::replay_until_start_of(Tid pid)
{
    auto tree = process_tree(trace_);
    const RecordedProcess* p = find_process(tree, pid);
    if (!p)
        throw ReplayError(ReplayErrorKind::Refused, 0, pid,
                          "the recording has no process " + std::to_string(pid) + "; it has " + list_processes(tree));
    // Its program: its own first exec, else what it was forked running
    // (the latest exec of the nearest ancestor that had one, before the fork).
    uint64_t begins_at = p->execs.empty() ? p->first_event : p->execs.front().event;
    std::optional<uint64_t> image = p->execs.empty() ? std::nullopt : std::optional(p->execs.front().event);
    for (const RecordedProcess* q = p; !image && q && q->parent;) {
        const RecordedProcess* parent = find_process(tree, q->parent);
        if (parent)
            for (const auto& x : parent->execs)
                if (x.event < q->first_event)
                    image = x.event;
        q = parent;
    }
    auto exec = image ? event_at(*image) : std::nullopt;
    if (!exec || !std::holds_alternative<ExecEvent>(*exec))
        throw ReplayError(ReplayErrorKind::Refused, begins_at, pid,
                          "no program is known for process " + std::to_string(pid));
    program_ = std::get<ExecEvent>(*exec);
    debugged_tgid_ = pid;
    history_begins_late_ = true;
    current_tid_ = p->execs.empty() ? pid : program_.tid;
    std::pair<perfclock::Position, std::unique_ptr<ReplaySnapshot>> on_the_way{
        perfclock::Position{engine_.next_event_index(), {}}, engine_.take_snapshot()};
    while (engine_.next_event_index() < begins_at)
        if (!engine_.step())
            throw ReplayError(ReplayErrorKind::Refused, begins_at, pid,
                              "the recording ends before process " + std::to_string(pid) + " starts");
    if (engine_.can_snapshot())
        on_the_way = {perfclock::Position{engine_.next_event_index(), {}}, engine_.take_snapshot()};
    // Its exec (or fork), then its own first event if that is the return of
    // the execve or fork: the next instruction is the process's first.
    engine_.step();
    Tid tid = current_tid_;
    for (;;) {
        const IndexedEvent* next = engine_.peek_next_event();
        if (!next)
            break;
        const auto* call = std::get_if<SyscallEvent>(&next->event);
        if (event_tid(next->event) == tid) {
            bool first_return = call && (p->execs.empty() ? (call->flags & kSyscallChildReturn) != 0
                                                          : (call->nr == SYS_execve || call->nr == SYS_execveat));
            if (first_return)
                engine_.step();
            break;
        }
        engine_.step(); // another process's event comes first
    }
    return on_the_way;
}

DebugHook::Then DebugSession::ask(const StopReport& report)
{
    StopReport r = report;
    if (exec_unreported_) {
        r.kind = StopReport::Kind::Exec;
        r.exec_path = program_.executable;
        exec_unreported_ = false;
    }
    // The debugger sees every thread stopped, also those a parallel trace
    // leaves asleep in a futex.
    struct Parked {
        Replayer& engine;
        std::vector<Tid> sleepers;
        explicit Parked(Replayer& e) : engine(e), sleepers(e.park_sleepers()) {}
        ~Parked() noexcept(false)
        {
            if (std::uncaught_exceptions() == 0)
                engine.unpark_sleepers(sleepers);
            else
                try {
                    engine.unpark_sleepers(sleepers);
                } catch (...) {
                    // (the travel under way restores a snapshot: the sleepers go with their process)
                }
        }
    } parked(engine_);
    for (;;) {
        ResumeRequest req = frontend_->on_stop(r);
        if (req.kind == ResumeRequest::Kind::Kill)
            throw SessionEnd{};
        if (req.kind == ResumeRequest::Kind::SwitchFrontend) {
            // Another debugger (rewind watch for reverse-watch) drives the
            // replay for a while; this one waits for its answer.
            frontends_.push_back(frontend_);
            frontend_ = req.frontend;
            r = stop(StopReport::Kind::Signal);
            continue;
        }
        if (req.kind != ResumeRequest::Kind::Continue && req.kind != ResumeRequest::Kind::Step) {
            if (diversion_)
                end_diversion();
            throw Travel{req};
        }
        leave_diversion_if_restored();
        if (diversion_) {
            // The debugger changed the program (an inferior call, `jump`):
            // it runs in the copy, the recording stays as it was.
            r = run_diversion(req.kind == ResumeRequest::Kind::Step, req.signal);
            continue;
        }
        apply_request(req);
        // Thread report.tid is part-way to its next event: no other thread
        // runs before it gets there.
        if (auto refused = locked_out(report.tid, "until its next event first")) {
            r = *refused;
            continue;
        }
        if (req.kind == ResumeRequest::Kind::Step && step_tid_ != report.tid) {
            // Another thread steps: this one goes on until that one has.
            if (Task* t = engine_.find_task(step_tid_))
                engine_.request_step(*t);
            return Then::Resume;
        }
        return req.kind == ResumeRequest::Kind::Step ? Then::Step : Then::Resume;
    }
}

void DebugSession::apply_request(const ResumeRequest& r)
{
    mode_ = Mode::Forward;
    step_pending_ = r.kind == ResumeRequest::Kind::Step;
    if (r.thread && engine_.find_task(r.thread) && (step_pending_ || r.only_thread))
        current_tid_ = r.thread;
    step_tid_ = current_tid_;
    locked_tid_ = r.only_thread ? current_tid_ : 0;
    // The debugger may have changed its breakpoints while stopped.
    if (Task* t = debugged_task())
        breakpoints_.apply(*t);
}

void DebugSession::begin_search()
{
    mode_ = Mode::Search;
    search_steps_ = 0;
    Task* t = runner();
    if (!t)
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "the debugged process is gone at " + position_.describe());
    uint64_t rip = t->regs()[Registers::RIP];
    trail_.start(position_, rip);
    // Standing on the arrival's instruction where no Break segment arrived
    // (after a watched write, at a boundary): its first execution is here,
    // no step away. Stepping on would find the next one, later in time.
    if (search_arrival_->kind == perfclock::Segment::Kind::Break && search_arrival_->count == 1 &&
        rip == search_arrival_->addr && resting_on_ != rip)
        throw SearchDone{0};
    if (search_arrival_->kind == perfclock::Segment::Kind::Watch) {
        const perfclock::Segment& a = *search_arrival_;
        search_counter_.emplace(t->tid(),
                                a.access == 1 ? perfclock::BreakpointKind::Write : perfclock::BreakpointKind::ReadWrite,
                                a.addr, a.len, 0, 0);
        search_counter_seen_ = 0;
    }
    engine_.set_single_stepping(*t, true);
}

StopReport DebugSession::stop(StopReport::Kind kind)
{
    // The debugger's thread may have exited meanwhile: another of the process stands in.
    if (Task* t = debugged_task())
        current_tid_ = t->recorded_tid();
    StopReport r;
    r.kind = kind;
    r.tid = current_tid_;
    return r;
}

std::string DebugSession::fmt_count_cap(uint64_t addr, uint64_t most)
{
    char text[160];
    std::snprintf(text, sizeof text,
                  "counting stopped: 0x%llx ran more than %llu times (each a trap: counted by int3s, or compared "
                  "with a snapshot)",
                  static_cast<unsigned long long>(addr), static_cast<unsigned long long>(most));
    return text;
}

void DebugSession::refuse_count_at_switch_point(uint64_t addr)
{
    if (perfclock::breakpoints_work())
        return;
    const IndexedEvent* next = engine_.peek_next_event();
    const auto* preempt = next ? std::get_if<PreemptEvent>(&next->event) : nullptr;
    if (preempt && preempt->regs[Registers::RIP] == addr) {
        char text[200];
        std::snprintf(text, sizeof text,
                      "counting stopped: 0x%llx is where the recording switched threads at event %llu, and "
                      "replaying that switch needs the instruction's int3",
                      static_cast<unsigned long long>(addr), static_cast<unsigned long long>(next->index));
        throw NoSuchPosition(text);
    }
}

std::string DebugSession::travel_unavailable(const ResumeRequest& r) const
{
    if (perfclock::breakpoints_work())
        return "";
    // Executions of an instruction are counted by int3s instead (a stop per
    // execution); what a data watchpoint sees has no such stand-in, and
    // reverse execution collects the debugger's watchpoints and steps back
    // by counting several instructions at once.
    using K = ResumeRequest::Kind;
    auto watches = [](const std::optional<perfclock::Position>& p) {
        return p && std::any_of(p->path.begin(), p->path.end(),
                                [](const perfclock::Segment& s) { return s.kind == perfclock::Segment::Kind::Watch; });
    };
    bool query_watches = r.kind == K::Query && !r.writes.empty();
    if (r.kind != K::ReverseContinue && r.kind != K::ReverseStep && !watches(r.from) && !watches(r.to) &&
        !query_watches)
        return "";
    return "this needs the CPU's debug registers, and they do not work on this machine (`rewind doctor`: hw "
           "breakpoints); forward execution, breakpoints, goto an event, a percentage or a position, and rewind "
           "watch work";
}

StopReport DebugSession::execute()
{
    if (Task* t = engine_.find_task(step_tid_); t && step_pending_ && mode_ == Mode::Forward)
        engine_.request_step(*t);
    for (;;) {
        if ((mode_ == Mode::Seek || mode_ == Mode::Collect) && position_ == target_ &&
            segment_ >= target_.path.size()) {
            // At a boundary target (or a snapshot exactly at the target).
            if (mode_ == Mode::Collect)
                throw CollectDone{};
            AfterArrival next = arrived();
            if (next == AfterArrival::Step) {
                if (Task* t = runner())
                    engine_.request_step(*t);
            } else if (next == AfterArrival::Report) {
                // Kept like a stop at a breakpoint: the debugger, or a
                // search bisecting events, comes back near here next.
                StopReport r = arrival_report();
                snapshot_stop();
                return r;
            }
            continue;
        }
        if (mode_ != Mode::Forward && position_.event == target_.event && position_.path.empty() && segment_ == 0 &&
            !target_.path.empty())
            arm_next_segment();
        if (mode_ == Mode::Collect && position_.event >= begin_.event) // (not in what the process ran before)
            if (Task* t = debugged_task())
                breakpoints_.apply(*t);
        if (at_end_of_history()) {
            // The program's last stretch runs to just before its exit; the
            // replay never goes further while it is debugged.
            // From inside that stretch too (a snapshot restored there): the
            // thread runs on to the exit call, stepping or stopping at
            // breakpoints on its way.
            if (!end_ || position_ != *end_)
                if (auto insn = engine_.stop_before_exit_call()) {
                    if (position_.path.empty() || !end_)
                        position_.extend(perfclock::Segment::brk(*insn, 1));
                    else
                        position_ = *end_; // one name for one point
                    if (!end_)
                        end_ = position_;
                }
            if (mode_ == Mode::Collect)
                throw CollectDone{};
            // A sampling run of the last stretch whose alarm came after
            // the program's end: no anchor, as when it reaches its event.
            if (sampling_)
                throw SamplingDone{};
            if (mode_ != Mode::Forward)
                throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                                  "the end of the recording came before " + target_.describe());
            step_pending_ = false;
            return stop(StopReport::Kind::ReplayEnd);
        }
        if (mode_ == Mode::Forward) {
            if (frontend_->interrupt_requested()) {
                StopReport r = stop(StopReport::Kind::Signal);
                r.signal = SIGINT;
                return r;
            }
            if (Task* t = debugged_task())
                breakpoints_.apply(*t);
            if (Task* next = runner())
                if (auto refused = locked_out(next->recorded_tid(),
                                              "next (at event " + std::to_string(engine_.next_event_index()) + ")"))
                    return *refused;
        }
        if (mode_ == Mode::Forward || mode_ == Mode::Seek)
            maybe_snapshot_boundary();
        const IndexedEvent* next = engine_.peek_next_event();
        Tid event_thread = next ? event_tid(next->event) : 0;
        const auto* signal = next ? std::get_if<SignalEvent>(&next->event) : nullptr;
        bool costly = signal && signal->kind == SignalKind::AtPosition;
        const auto* exec = next ? std::get_if<ExecEvent>(&next->event) : nullptr;
        std::optional<ExecEvent> new_program;
        if (exec && exec->tgid == debugged_tgid_ && position_.event >= begin_.event)
            new_program = *exec; // (not one before the start, replayed again from an earlier snapshot)
        // A long stretch without events: look now and then whether the debugger is still there.
        bool watching = mode_ == Mode::Forward && !sampling_;
        if (Task* t = watching ? engine_.find_task(event_thread) : nullptr)
            engine_.interrupt_after(*t, kLookForDebuggerEvery);
        // Runs of syscalls served by notification: seeking, nothing looks
        // at the boundaries before the target but the boundary snapshots,
        // taken as often as before; going forward, a stop in a run is named
        // from the last boundary passed (on_event_passed), and the debugger
        // is looked for at least as often.
        bool through = !costly && !new_program && position_.path.empty() &&
                       ((mode_ == Mode::Seek && position_.event + 1 < target_.event) ||
                        (mode_ == Mode::Forward && !step_pending_ && !sampling_));
        uint64_t through_last = mode_ == Mode::Seek ? target_.event - 1 : UINT64_MAX;
        // (Where no snapshot could be taken, the next try is as far away.)
        auto snapshot_due = last_boundary_snapshot_ + kBoundarySnapshotEvery;
        if (snapshot_due <= coarse_now())
            snapshot_due = coarse_now() + kBoundarySnapshotEvery;
        // Seeking with no breakpoint or watchpoint set, nothing but the next
        // call is to stop a thread in a run (a debugger's traps stay in the
        // process while seeking, and their hits are passed over).
        bool untrapped = mode_ == Mode::Seek && breakpoints_.software().empty() && breakpoints_.hardware().empty();
        const auto* call = next ? std::get_if<SyscallEvent>(&next->event) : nullptr;
        bool remaps = through || (call && (call->nr == SYS_mmap || call->nr == SYS_munmap || call->nr == SYS_mremap ||
                                           call->nr == SYS_shmat));
        bool stepped = through ? engine_.step_through(through_last, snapshot_due, untrapped) : engine_.step();
        if (remaps)
            breakpoints_.mappings_changed();
        if (watching)
            engine_.cancel_interrupt();
        if (!stepped)
            return stop(StopReport::Kind::ReplayEnd);
        position_ = perfclock::Position{engine_.next_event_index(), {}};
        if (query_ && mode_ == Mode::Collect)
            note_query_event();
        if (new_program)
            if (auto report = enter_new_program(*new_program))
                return *report;
        if (mode_ == Mode::Seek && nearest_boundary_ok_ && target_.path.empty() && position_.event > target_.event) {
            // The event asked for is replayed together with the one before
            // (a vfork child's events run while its parent waits): the
            // nearest boundary after it is where the replay can stop.
            debug_log("  event %llu is inside a step: arriving at %llu", (unsigned long long)target_.event,
                      (unsigned long long)position_.event);
            target_ = position_;
        }
        if ((mode_ == Mode::Seek || mode_ == Mode::Search) && position_.event > target_.event)
            throw NoSuchPosition("the recording has no " + target_.describe() + ": event " +
                                 std::to_string(target_.event) + " comes first");
        if (costly)
            snapshot_here(Timeline::Kind::Boundary); // finding that signal's point again is slow
        hit_counts_.clear();
        resting_on_ = 0;
        end_step_over(); // the stepped instruction was a syscall: no step trap came
        // (The debugger may have asked for the step while the event ran.)
        if (mode_ == Mode::Forward && step_pending_ && event_thread == step_tid_) {
            // The single step ran into the event (it executed the syscall,
            // or a signal was delivered): it ends after it.
            step_pending_ = false;
            return stop(StopReport::Kind::Step);
        }
    }
}

std::optional<StopReport> DebugSession::locked_out(Tid runs_first, const std::string& when)
{
    // With scheduler-locking, only the debugger's thread may move. If the
    // recording runs another thread of the program first, the replay stops
    // there rather than move it: in the locked thread, which did not move.
    if (!locked_tid_ || runs_first == locked_tid_ || !engine_.find_task(locked_tid_))
        return std::nullopt;
    Task* other = engine_.find_task(runs_first);
    if (!other || !is_debugged(*other))
        return std::nullopt;
    travel_error_ = "scheduler-locking is on: thread " + std::to_string(locked_tid_) +
                    " cannot go on alone, the recording runs thread " + std::to_string(runs_first) + " " + when +
                    "; `set scheduler-locking off` to let it";
    locked_tid_ = 0;
    step_pending_ = false;
    StopReport r = stop(StopReport::Kind::Signal);
    r.signal = SIGINT;
    return r;
}

bool DebugSession::at_end_of_history()
{
    const IndexedEvent* next = engine_.peek_next_event();
    if (!next)
        return true;
    const auto* exit = std::get_if<ExitEvent>(&next->event);
    if (!exit || exit->tgid != debugged_tgid_)
        return false;
    // A thread's exit_group ends every thread of the process: the exits of
    // the others (the last of which is group_dead) follow in the trace, but
    // once it has run there is no thread left to stop (xz's main thread
    // exits while its workers wait in a futex).
    bool group_exit = exit->pending_nr == SYS_exit_group && !WIFSIGNALED(exit->exit_code);
    // The kernel may report the killed threads' exits before the caller's.
    return exit->group_dead || group_exit || engine_.killed_by_group_exit_ahead(next) != nullptr;
}

void DebugSession::on_event_passed(uint64_t index)
{
    // What the loop in execute() does after each event.
    position_ = perfclock::Position{index, {}};
    hit_counts_.clear();
    resting_on_ = 0;
}

void DebugSession::maybe_snapshot_boundary()
{
    auto now = coarse_now();
    if (now - last_boundary_snapshot_ < kBoundarySnapshotEvery || timeline_.has_at(position_) ||
        !engine_.can_snapshot())
        return;
    timeline_.add(Timeline::Kind::Boundary, position_, engine_.take_snapshot());
    last_boundary_snapshot_ = coarse_now();
}

void DebugSession::snapshot_stop()
{
    snapshot_here(Timeline::Kind::Stop);
}

void DebugSession::snapshot_here(Timeline::Kind kind)
{
    if (timeline_.has_at(position_) || !engine_.can_snapshot())
        return;
    timeline_.add(kind, position_, engine_.take_snapshot());
}

// ---- the engine's hook --------------------------------------------------

Task* DebugSession::debugged_task()
{
    Task* t = engine_.find_task(current_tid_);
    if (t)
        return t;
    for (Task* candidate : engine_.live_tasks())
        if (candidate->group().recorded_tgid == debugged_tgid_)
            return candidate;
    return nullptr;
}

Task* DebugSession::runner()
{
    if (Task* t = engine_.find_task(engine_.running_thread()); t && is_debugged(*t))
        return t;
    return debugged_task();
}

void DebugSession::stop_single_stepping()
{
    for (Task* t : engine_.live_tasks())
        engine_.set_single_stepping(*t, false);
}

bool DebugSession::is_debugged(Task& t)
{
    return t.group().recorded_tgid == debugged_tgid_;
}

std::optional<uint8_t> DebugSession::byte_under_breakpoint(Task& task, uint64_t addr)
{
    if (auto b = breakpoints_.inserted_at(task.group().tgid, addr))
        return b;
    if (soft_target_.addr == addr && !soft_target_.stepping && soft_target_.pid == task.tid())
        return soft_target_.original;
    return soft_counters_.original_at(addr);
}

bool DebugSession::traps_code(Task& task, uint64_t start, uint64_t end)
{
    for (uint64_t addr = start; addr < end; addr++)
        if (byte_under_breakpoint(task, addr))
            return true;
    for (const auto& bp : breakpoints_.hardware())
        if (bp.kind == perfclock::BreakpointKind::Execute && bp.addr >= start && bp.addr < end)
            return true;
    return false;
}

bool DebugSession::watches_memory()
{
    for (const auto& bp : breakpoints_.hardware())
        if (bp.kind != perfclock::BreakpointKind::Execute)
            return true;
    return false;
}

void DebugSession::before_fork(Task& task)
{
    if (is_debugged(task)) {
        breakpoints_.lift(task);
        soft_counters_.lift_all();
    }
    if (soft_target_.addr && soft_target_.pid == task.tid() && !soft_target_.stepping)
        remove_soft_target(task);
}

void DebugSession::after_fork(Task& task)
{
    if (soft_target_.addr && soft_target_.pid == task.tid() && !soft_target_.stepping)
        insert_soft_target(task);
    if (is_debugged(task))
        soft_counters_.plant_all();
    if (is_debugged(task) && (mode_ == Mode::Forward || mode_ == Mode::Collect))
        breakpoints_.apply(task);
}

void DebugSession::on_signal(Task& task, const SignalEvent& signal)
{
    int signo = signal.signo;
    if (!is_debugged(task))
        return;
    current_tid_ = task.recorded_tid();
    switch (mode_) {
    case Mode::Forward: {
        if (passed_.count(signo) && !step_pending_)
            return;
        position_.extend(perfclock::Segment::to_event());
        StopReport r = stop(StopReport::Kind::Signal);
        r.signal = signo;
        r.siginfo = signal.siginfo;
        step_pending_ = false;
        // The recording delivered this signal: whatever the debugger says,
        // it is delivered when the program resumes.
        ask(r);
        return;
    }
    case Mode::Seek:
    case Mode::Collect:
        if (at_event_segment())
            segment_reached();
        return;
    case Mode::Backstep:
        return;
    case Mode::Search:
        // Delivered (or faulting) before the next instruction: as many
        // instructions as steps so far.
        if (search_arrival_ && search_arrival_->kind == perfclock::Segment::Kind::ToEvent)
            throw SearchDone{search_steps_};
        return;
    }
}

bool DebugSession::at_event_segment() const
{
    // Earlier events' signals and preemptions come on the way to the target's boundary.
    return position_.event == target_.event && segment_ < target_.path.size() &&
           target_.path[segment_].kind == perfclock::Segment::Kind::ToEvent;
}

void DebugSession::on_event_point(Task& task)
{
    // A position's ToEvent segment ends here as at a signal's delivery
    // point; running forward for the debugger, it is not a stop.
    if (!is_debugged(task))
        return;
    // A target counted on the preemption's own instruction trapped together
    // with the engine's breakpoint there, and only one SIGTRAP came: its count says.
    bool target_here = position_.event == target_.event && target_counter_ &&
                       current_.kind == perfclock::Segment::Kind::Break &&
                       current_.addr == task.regs()[Registers::RIP] && target_counter_->count() >= target_expected_;
    if ((mode_ == Mode::Seek || mode_ == Mode::Collect) && (target_here || at_event_segment())) {
        current_tid_ = task.recorded_tid();
        segment_reached();
    } else if (mode_ == Mode::Search && search_arrival_ && search_arrival_->kind == perfclock::Segment::Kind::ToEvent) {
        // The step that landed on the point was counted; the engine's trap
        // there (an int3 the next step ran) is not an instruction.
        if (search_steps_ > 0 && trail_.drop_last_at(task.regs()[Registers::RIP]))
            search_steps_--;
        throw SearchDone{search_steps_};
    }
}

// ---- queries ------------------------------------------------------------

std::vector<Tid> DebugSession::threads()
{
    std::vector<Tid> out;
    for (Task* t : engine_.live_tasks())
        if (is_debugged(*t))
            out.push_back(t->recorded_tid());
    return out;
}

bool DebugSession::has_thread(Tid tid)
{
    Task* t = engine_.find_task(tid);
    return t && is_debugged(*t);
}

uint64_t DebugSession::total_events() const
{
    return trace_.end() ? trace_.end()->events : 0;
}

std::string DebugSession::describe_position()
{
    std::string s = position_.describe();
    if (diversion_ && (diversion_->unrun_writes || !diversion_restored()))
        s += " (in a throwaway copy: the debugger changed registers or memory)";
    // The percentage is of the debugged program's history (what goto PCT%
    // spans): from its start to the recording's last event.
    if (uint64_t total = total_events()) {
        uint64_t span = total - 1 > begin_.event ? total - 1 - begin_.event : 0;
        uint64_t done = position_.event > begin_.event ? position_.event - begin_.event : 0;
        uint64_t percent = span ? std::min<uint64_t>((done * 100 + span / 2) / span, 100) : 100;
        s += " of " + std::to_string(total) + " events (" + std::to_string(percent) + "%";
        if (history_begins_late_)
            s += " of the history from event " + std::to_string(begin_.event);
        s += ")";
    }
    return s;
}

uint64_t DebugSession::add_checkpoint()
{
    if (diversion_)
        throw ReplayError(ReplayErrorKind::Refused, position_.event, 0,
                          "the debugger changed registers or memory here (a throwaway copy runs): continue or step "
                          "back to the recording before taking a checkpoint");
    if (!engine_.can_snapshot())
        throw ReplayError(ReplayErrorKind::Refused, position_.event, 0, "cannot take a checkpoint at this point");
    Task* t = debugged_task();
    if (t)
        breakpoints_.lift(*t);
    auto snap = engine_.take_snapshot();
    if (t)
        breakpoints_.apply(*t);
    return timeline_.add(Timeline::Kind::Checkpoint, position_, std::move(snap), describe_position()).id;
}

bool DebugSession::delete_checkpoint(uint64_t id)
{
    return timeline_.remove_checkpoint(id);
}

std::vector<std::pair<uint64_t, std::string>> DebugSession::list_checkpoints() const
{
    std::vector<std::pair<uint64_t, std::string>> out;
    for (const auto* e : timeline_.checkpoints())
        out.push_back({e->id, e->note});
    return out;
}

} // namespace rw::replay
