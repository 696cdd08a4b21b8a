// Time travel: going to a position, and finding where reverse execution stops.
#include <sys/syscall.h>

#include <algorithm>

#include "debug_session.h"

namespace rw::replay {
namespace {

// Up to this many executions, a Break target is counted with an int3.
constexpr uint64_t kSoftTargetMostHits = 16;

} // namespace

void DebugSession::begin_travel(const ResumeRequest& r)
{
    nearest_boundary_ok_ = false;
    StopReport report = stop(StopReport::Kind::Signal);
    perfclock::Position target = begin_;
    switch (r.kind) {
    case ResumeRequest::Kind::ReverseContinue: {
        auto hit = last_hit_before(position_);
        if (!hit) {
            report.kind = StopReport::Kind::ReplayBegin;
            break;
        }
        report.kind = hit->kind;
        if (hit->kind == StopReport::Kind::Watch) {
            // Stop before the instruction that wrote, so it can be seen
            // (the watchpoint traps after it).
            report.watch_addr = hit->addr;
            report.watch_access = hit->access;
            target = previous_instruction(hit->pos, hit->arrival).value_or(begin_);
        } else {
            target = hit->pos;
        }
        break;
    }
    case ResumeRequest::Kind::ReverseStep: {
        Tid tid = r.thread > 0 && engine_.find_task(r.thread) ? r.thread : current_tid_;
        perfclock::Position from = position_; // (finding the previous instruction may travel)
        backstep_most_traps_ = r.value;
        struct Unbounded {
            uint64_t& most;
            ~Unbounded() { most = 0; }
        } unbounded{backstep_most_traps_};
        auto prev = previous_instruction_of(tid, position_, arrival_here());
        if (prev) {
            report.kind = StopReport::Kind::Step;
            target = *prev;
            if (collected_ && from == collected_->hits[collected_->reported].pos)
                collected_->stepped_to = *prev; // (gdb steps back off a breakpoint before going on)
        } else {
            report.kind = StopReport::Kind::ReplayBegin;
        }
        break;
    }
    case ResumeRequest::Kind::GotoEvent:
        target = perfclock::Position{std::max(r.value, begin_.event), {}};
        nearest_boundary_ok_ = true;
        break;
    case ResumeRequest::Kind::GotoPercent: {
        nearest_boundary_ok_ = true;
        uint64_t total = std::max(total_events(), begin_.event + 1);
        target =
            perfclock::Position{begin_.event + (total - 1 - begin_.event) * std::min<uint64_t>(r.value, 100) / 100, {}};
        break;
    }
    case ResumeRequest::Kind::GotoCheckpoint:
        if (r.value) {
            const Timeline::Entry* e = timeline_.find_checkpoint(r.value);
            if (e)
                target = e->pos;
        }
        break;
    case ResumeRequest::Kind::GotoPosition:
        target = r.from.value_or(begin_);
        break;
    case ResumeRequest::Kind::GotoEnd:
    case ResumeRequest::Kind::Count:
    case ResumeRequest::Kind::Steps:
    case ResumeRequest::Kind::Sample:
    case ResumeRequest::Kind::Label:
    case ResumeRequest::Kind::Query:
        begin_probe(r, report);
        return;
    default:
        break;
    }
    seek(target, report);
}

StopReport DebugSession::arrival_report()
{
    mode_ = Mode::Forward;
    // Inside a stretch between events, the thread that runs it stands at
    // the position; at a boundary, the debugger's thread stays its choice.
    if (!position_.path.empty())
        if (Task* t = runner())
            current_tid_ = t->recorded_tid();
    if (Task* t = debugged_task())
        breakpoints_.apply(*t);
    StopReport r = seek_report_.value_or(stop(StopReport::Kind::Signal));
    r.tid = current_tid_;
    seek_report_.reset();
    return r;
}

DebugSession::AfterArrival DebugSession::arrived()
{
    if (!arrival_hook_)
        return AfterArrival::Report;
    auto hook = std::move(arrival_hook_);
    arrival_hook_ = nullptr;
    return hook();
}

void DebugSession::retarget(const perfclock::Position& target)
{
    // From the current position (a prefix of the target, or an earlier boundary).
    target_ = target;
    if (target.event != position_.event) {
        segment_ = 0;
        return; // armed at the target's boundary
    }
    segment_ = position_.path.size();
    if (segment_ < target_.path.size())
        arm_next_segment();
}

StopReport DebugSession::seek(const perfclock::Position& target, const StopReport& report)
{
    debug_log("seek %s", target.describe().c_str());
    restore_for(target);
    seek_report_ = report;
    return report;
}

std::string DebugSession::snapshot_gone(const perfclock::Position& anchored) const
{
    return "the snapshot " + anchored.describe() + " belongs to is gone" +
           (timeline_.released_for_memory() ? " (memory was short: " + std::to_string(timeline_.released_for_memory()) +
                                                  " snapshots were let go rather than have the kernel kill processes)"
                                            : "");
}

void DebugSession::hold_anchors(const std::vector<perfclock::Position>& positions)
{
    std::set<uint64_t> ids;
    for (const auto& p : positions)
        if (p.anchored())
            ids.insert(p.path[0].addr);
    timeline_.hold_anchors(std::move(ids));
}

void DebugSession::restore_for(const perfclock::Position& target)
{
    const Timeline::Entry* from = timeline_.best_for(target);
    if (!from)
        from = timeline_.best_for(begin_);
    if (landmarks_ && !target.anchored())
        if (const Timeline::Entry* l = landmarks_->bring_in(target, from->pos, timeline_, engine_))
            from = l;
    // An anchored position is reached from its own snapshot only.
    if (target.anchored() && (from->pos.path.empty() || !(from->pos.path[0] == target.path[0])))
        throw NoSuchPosition(snapshot_gone(target));
    debug_log("  restore %s", from->pos.describe().c_str());
    mode_ = Mode::Seek;
    target_ = target;
    disarm_targets();
    steps_left_ = 0;
    hit_counts_.clear();
    stepping_over_ = 0;
    step_pending_ = false;
    if (landmarks_ && landmarks_->owns(*from)) {
        try {
            engine_.restore(*from->snapshot);
        } catch (const ReplayError& e) {
            // From the next best start instead (the world is rebuilt anyway).
            landmarks_->failed(*from, e.what());
            timeline_.remove(from);
            restore_for(target);
            return;
        }
    } else {
        engine_.restore(*from->snapshot);
    }
    position_ = from->pos;
    rest_after_restore();
    segment_ = 0;
    if (from->pos.event != target.event || from->pos.path.empty())
        return; // execute() arms the path at the target's boundary
    continue_from(from->pos);
}

void DebugSession::continue_from(const perfclock::Position& snapshot)
{
    // The snapshot's path is a prefix of the target's, or stops part-way
    // through the target's segment there (fewer steps, or fewer executions
    // of the same instruction): that segment goes on for the rest.
    size_t n = snapshot.path.size();
    const perfclock::Segment& mine = snapshot.path[n - 1];
    const perfclock::Segment& theirs = target_.path[n - 1];
    if (!(mine == theirs) && mine.kind == theirs.kind && theirs.count > mine.count) {
        segment_ = n - 1;
        perfclock::Segment rest = theirs;
        rest.count = theirs.count - mine.count; // a Break rests on its address: the count goes on from there
        arm(rest);
        return;
    }
    segment_ = n;
    if (segment_ < target_.path.size())
        arm_next_segment();
}

void DebugSession::rest_on(Task& task, uint64_t addr)
{
    // A hardware execution breakpoint sets the resume flag so that the
    // instruction runs without trapping again; a task that arrived through
    // an int3 or a single step has it clear. Clear it always: the execution
    // the task rests before is then seen by every counter armed from here,
    // however the task got here (or whichever snapshot it is restored from).
    Registers regs = task.regs();
    if (regs[Registers::EFLAGS] & kResumeFlag) {
        regs[Registers::EFLAGS] &= ~kResumeFlag;
        task.set_regs(regs);
    }
    resting_on_ = addr;
}

void DebugSession::rest_after_restore()
{
    resting_on_ = 0;
    if (uint64_t addr = resting_address(position_))
        if (Task* t = runner())
            rest_on(*t, addr);
}

void DebugSession::arm_next_segment()
{
    arm(target_.path[segment_]);
}

void DebugSession::arm(const perfclock::Segment& s)
{
    Task* t = runner();
    if (!t)
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "the debugged process is gone before " + target_.describe());
    current_ = s;
    disarm_targets();
    steps_left_ = 0;
    hit_counts_.clear();
    engine_.set_single_stepping(*t, s.kind == perfclock::Segment::Kind::Step || (probe_ && probe_->stepping()));
    switch (s.kind) {
    case perfclock::Segment::Kind::Break: {
        // Resting on the address: the counter sees that execution too.
        uint64_t count = s.count + (s.addr == resting_on_ ? 1 : 0);
        // An int3 in memory other threads share would stop them too: their
        // counters are the debug registers, which are per thread.
        bool shared = (mode_ == Mode::Collect && breakpoints_.has_software(s.addr)) || t->vm()->tasks.size() > 1;
        // Without debug registers every counter is an int3, and all of them
        // share one per address (a probe may count where its end lies).
        if (count <= kSoftTargetMostHits && !shared && perfclock::breakpoints_work())
            arm_soft_target(*t, s.addr, count);
        else
            target_counter_.emplace(soft_counters_, t->tid(), s.addr, count, kTagTarget);
        target_expected_ = count;
        break;
    }
    case perfclock::Segment::Kind::Watch:
        target_watch_.emplace(t->tid(),
                              s.access == 1 ? perfclock::BreakpointKind::Write : perfclock::BreakpointKind::ReadWrite,
                              s.addr, s.len, s.count, kTagTarget);
        break;
    case perfclock::Segment::Kind::Step:
        steps_left_ = s.count;
        engine_.request_step(*t);
        break;
    case perfclock::Segment::Kind::ToEvent:
        break;
    case perfclock::Segment::Kind::Anchor:
        // Reached only by restoring its snapshot, which is gone.
        throw NoSuchPosition("the snapshot " + target_.describe() + " belongs to is gone");
    }
}

void DebugSession::arm_soft_target(Task& task, uint64_t addr, uint64_t count)
{
    soft_target_ = {addr, count, 0, task.tid(), false};
    if (auto under = engine_.engine_byte_under(addr))
        soft_target_.original = *under; // the engine's int3 is there: this one shares it
    else if (!task.memory().read(RemoteAddr(addr), {&soft_target_.original, 1}))
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "cannot read the code at " +
                              perfclock::Position{0, {perfclock::Segment::brk(addr, count)}}.describe());
    insert_soft_target(task);
}

void DebugSession::insert_soft_target(Task& task)
{
    uint8_t int3 = 0xcc;
    task.memory().write_code(RemoteAddr(soft_target_.addr), {&int3, 1});
}

void DebugSession::remove_soft_target(Task& task)
{
    uint8_t int3 = 0xcc;
    bool engine_has_it = engine_.engine_byte_under(soft_target_.addr).has_value();
    task.memory().write_code(RemoteAddr(soft_target_.addr), {engine_has_it ? &int3 : &soft_target_.original, 1});
}

void DebugSession::disarm_targets()
{
    target_counter_.reset();
    target_watch_.reset();
    if (soft_target_.addr) {
        if (Task* t = engine_.find_task(current_tid_); t && t->tid() == soft_target_.pid && !soft_target_.stepping)
            remove_soft_target(*t);
        soft_target_ = {};
    }
}

DebugHook::Then DebugSession::segment_reached()
{
    const perfclock::Segment s = current_;
    if (s.kind == perfclock::Segment::Kind::Step && --steps_left_ > 0)
        return Then::Step;
    // The state is the target's path this far (a segment resumed part-way
    // from a snapshot completes the target's own segment).
    position_.path.assign(target_.path.begin(), target_.path.begin() + static_cast<long>(segment_) + 1);
    resting_on_ = 0;
    segment_++;
    if (Task* t = runner()) {
        if (s.kind == perfclock::Segment::Kind::Break)
            rest_on(*t, s.addr);
        engine_.set_single_stepping(*t, probe_ && probe_->stepping());
    }
    disarm_targets();
    hit_counts_.clear();
    if (segment_ < target_.path.size()) {
        arm_next_segment();
        return steps_left_ > 0 ? Then::Step : Then::Resume;
    }
    // Arrived.
    if (mode_ == Mode::Collect)
        throw CollectDone{};
    AfterArrival next = arrived();
    if (next == AfterArrival::Step)
        return Then::Step;
    if (next == AfterArrival::Continue)
        return Then::Resume;
    StopReport r = arrival_report();
    snapshot_stop();
    return ask(r);
}

std::vector<DebugSession::Hit> DebugSession::collect(const Timeline::Entry& from, const perfclock::Position& to)
{
    mode_ = Mode::Collect;
    target_ = to;
    disarm_targets();
    steps_left_ = 0;
    hits_.clear();
    hit_counts_.clear();
    stepping_over_ = 0;
    step_pending_ = false;
    engine_.restore(*from.snapshot);
    position_ = from.pos;
    rest_after_restore();
    segment_ = 0;
    if (Task* t = debugged_task())
        breakpoints_.apply(*t);
    if (from.pos.event == to.event && !from.pos.path.empty())
        continue_from(from.pos);
    try {
        execute();
    } catch (const CollectDone&) {
    }
    end_step_over();
    mode_ = Mode::Forward;
    return hits_;
}

std::optional<DebugSession::Hit> DebugSession::last_hit_before(const perfclock::Position& p)
{
    if (breakpoints_.software().empty() && breakpoints_.hardware().empty())
        return std::nullopt;
    // Just after a watched write: going back undoes it, so it is the first hit.
    if (auto here = hit_at(p); here && here->kind == StopReport::Kind::Watch) {
        if (p == position_)
            here->arrival = arrival_here();
        return here;
    }
    if (auto cached = cached_hit_before(p))
        return cached;
    std::string key = breakpoints_key();
    perfclock::Position end = p;
    for (;;) {
        // Never into what the process ran before its history began (the
        // former program of an exec): the snapshots taken there are kept.
        const Timeline::Entry* from = timeline_.strictly_before(end);
        if (!from || from->pos.event < begin_.event)
            return std::nullopt;
        perfclock::Position from_pos = from->pos;
        debug_log("collect %s -> %s", from_pos.describe().c_str(), end.describe().c_str());
        auto hits = collect(*from, end);
        debug_log("  %zu hits", hits.size());
        if (!hits.empty()) {
            collected_ = CollectedHits{key, hits, hits.size() - 1, std::nullopt};
            return hits.back();
        }
        // The snapshot itself may stand at a hit (collecting starts after it).
        if (auto here = hit_at(from_pos)) {
            if (here->kind == StopReport::Kind::Watch) {
                // What the state is there, to find the writing instruction.
                restore_for(from_pos);
                position_ = from_pos;
                here->arrival = arrival_here();
            }
            return here;
        }
        if (from_pos == begin_)
            return std::nullopt;
        end = from_pos;
    }
}

std::optional<DebugSession::Hit> DebugSession::cached_hit_before(const perfclock::Position& p)
{
    if (!collected_ || collected_->breakpoints != breakpoints_key())
        return std::nullopt;
    CollectedHits& c = collected_.value();
    auto is_break = [](const Hit& h) {
        return h.kind == StopReport::Kind::SoftwareBreak || h.kind == StopReport::Kind::HardwareBreak;
    };
    size_t j = c.reported;
    if (j == 0 || !is_break(c.hits[j]))
        return std::nullopt;
    // Hits j - 1 and j are consecutive: one instruction before j, the
    // previous hit is j - 1 unless that instruction is j - 1 itself.
    size_t before;
    if (p == c.hits[j].pos)
        before = j - 1;
    else if (c.stepped_to && p == *c.stepped_to)
        before = p == c.hits[j - 1].pos ? j - 2 : j - 1;
    else
        return std::nullopt;
    if (before >= c.hits.size() || !is_break(c.hits[before]))
        return std::nullopt; // (j - 2 below the first: the ordinary search looks further back)
    debug_log("the hit before %s, as the last collect found it", p.describe().c_str());
    c.reported = before;
    c.stepped_to.reset();
    return c.hits[before];
}

std::string DebugSession::breakpoints_key() const
{
    std::string key;
    for (uint64_t a : breakpoints_.software())
        key += "s" + std::to_string(a) + " ";
    for (const auto& h : breakpoints_.hardware())
        key += "h" + std::to_string(static_cast<int>(h.kind)) + ":" + std::to_string(h.addr) + ":" +
               std::to_string(h.len) + " ";
    return key;
}

std::optional<DebugSession::Hit> DebugSession::hit_at(const perfclock::Position& p) const
{
    if (p.path.empty())
        return std::nullopt;
    const perfclock::Segment& last = p.path.back();
    if (last.kind == perfclock::Segment::Kind::Break) {
        if (breakpoints_.has_software(last.addr))
            return Hit{p, StopReport::Kind::SoftwareBreak, last.addr, 1, std::nullopt};
        for (const auto& h : breakpoints_.hardware())
            if (h.kind == perfclock::BreakpointKind::Execute && h.addr == last.addr)
                return Hit{p, StopReport::Kind::HardwareBreak, last.addr, 1, std::nullopt};
    } else if (last.kind == perfclock::Segment::Kind::Watch) {
        for (const auto& h : breakpoints_.hardware()) {
            uint8_t access = h.kind == perfclock::BreakpointKind::Write ? 1 : 2;
            if (h.kind != perfclock::BreakpointKind::Execute && h.addr == last.addr && h.len == last.len &&
                access == last.access)
                return Hit{p, StopReport::Kind::Watch, h.addr, access, std::nullopt};
        }
    }
    return std::nullopt;
}

std::optional<Event> DebugSession::event_at(uint64_t index)
{
    if (!random_reader_)
        random_reader_.emplace(trace_.events());
    random_reader_->seek(index);
    Event e;
    if (!random_reader_->next(e))
        return std::nullopt;
    return e;
}

const perfclock::RunningTimes& DebugSession::running_times()
{
    if (!running_times_ || running_times_->process() != debugged_tgid_) {
        const TraceEnd* end = trace_.end() ? &*trace_.end() : nullptr;
        EventStreamReader reader(trace_.events());
        running_times_ = std::make_unique<perfclock::RunningTimes>(
            [&reader](Event& e) { return reader.next(e); }, debugged_tgid_, end && end->kernel_hz == kThreadTimeHz);
    }
    return *running_times_;
}

std::optional<DebugSession::Arrival> DebugSession::arrival_here()
{
    Task* t = runner();
    if (!t || position_.path.empty() || diversion_)
        return std::nullopt;
    return Arrival{t->regs(), candidates_before(position_.path.back(), *t), end_ && position_ == *end_};
}

std::optional<perfclock::Position> DebugSession::previous_instruction(const perfclock::Position& p,
                                                                      const std::optional<Arrival>& at)
{
    if (p == begin_ || p.event < begin_.event)
        return std::nullopt;
    if (p.path.empty() || (p.path.size() == 1 && p.path[0].kind == perfclock::Segment::Kind::ToEvent && [&] {
            auto e = event_at(p.event);
            const auto* s = e ? std::get_if<SignalEvent>(&*e) : nullptr;
            return s && s->kind == SignalKind::AtSyscall;
        }())) {
        // The instruction before an event boundary ends the stretch before it.
        if (p.event <= begin_.event)
            return std::nullopt;
        auto e = event_at(p.event - 1);
        perfclock::Position prev{p.event - 1, {}};
        if (e) {
            if (const auto* sc = std::get_if<SyscallEvent>(&*e);
                sc && sc->tgid == debugged_tgid_ && !(sc->flags & kSyscallChildReturn))
                return prev.with(perfclock::Segment::brk(sc->ip - 2, 1));
            if (const auto* rd = std::get_if<RdtscEvent>(&*e))
                return prev.with(perfclock::Segment::brk(rd->ip, 1));
            // An rdrand/rdseed: the thread stands on it where the event
            // comes (replay runs it in the program's place, with an int3
            // that a breakpoint there would share).
            if (std::holds_alternative<RandomEvent>(*e))
                return prev.with(perfclock::Segment::to_event());
            // Just after a signal's delivery (the handler's first
            // instruction): before it, the interrupted point.
            if (const auto* sg = std::get_if<SignalEvent>(&*e); sg && sg->tgid == debugged_tgid_)
                return prev.with(perfclock::Segment::to_event());
            if (std::holds_alternative<PreemptEvent>(*e))
                throw NoSuchPosition("stepping back across the point where the recording switched threads (event " +
                                     std::to_string(p.event - 1) + ") is not supported");
        }
        return prev;
    }
    // Stepped through already (a reverse-next is many reverse-stepi).
    if (auto known = trail_.before(p))
        return known;
    const perfclock::Segment last = p.path.back();
    perfclock::Position base = p.parent();
    switch (last.kind) {
    case perfclock::Segment::Kind::Anchor:
        // An anchor has no count to go back from: name it by one first.
        return previous_instruction(label(base, p), at);
    case perfclock::Segment::Kind::Step:
        return last.count > 1 ? base.with(perfclock::Segment::step(last.count - 1)) : base;
    case perfclock::Segment::Kind::Break:
    case perfclock::Segment::Kind::Watch:
    case perfclock::Segment::Kind::ToEvent: {
        // Step from the previous arrival (or the segment's start) to this
        // one; the instruction before the last step is the answer.
        perfclock::Segment arrival = last;
        if (last.kind != perfclock::Segment::Kind::ToEvent && last.count > 1) {
            perfclock::Segment earlier = last;
            earlier.count--;
            base = base.with(earlier);
        }
        arrival.count = 1;
        if (at) {
            if (auto found = backstep_in_rounds(base, arrival, at->before, *at))
                return found;
            // Just returned from a call whose callee the candidates missed.
            if (auto callee = callee_returning(base, arrival, *at)) {
                std::vector<uint64_t> rets;
                if (Task* t = runner()) {
                    TraceeMemory mem = t->memory();
                    MemoryReader read = [&](uint64_t addr, std::span<uint8_t> out) {
                        return mem.read(RemoteAddr(addr), out);
                    };
                    rets = returns_of_function(decoder_, *callee, at->regs, read);
                }
                debug_log("  called 0x%llx: %zu returns", static_cast<unsigned long long>(*callee), rets.size());
                if (auto found = backstep_in_rounds(base, arrival, rets, *at))
                    return found;
            }
        }
        if (backstep_most_traps_)
            throw NoSuchPosition("counting stopped: the instruction before is not among those a replay could trap");
        uint64_t steps = search_steps(base, arrival);
        if (steps == 0)
            return previous_instruction(base, at); // the arrival is the base itself, by another name
        if (steps == 1)
            return base;
        return trail_.last();
    }
    }
    return base;
}

Tid DebugSession::thread_of_event(uint64_t index)
{
    auto e = event_at(index);
    return e ? event_tid(*e) : 0;
}

std::optional<perfclock::Position> DebugSession::previous_instruction_of(Tid tid, const perfclock::Position& p,
                                                                         const std::optional<Arrival>& at)
{
    // Between two events only the thread of the later one runs: `tid` last
    // ran in the stretch before its latest event, or in this one.
    if (!p.path.empty() && thread_of_event(p.event) == tid)
        return previous_instruction(p, at);
    for (uint64_t i = p.event; i > begin_.event; i--) {
        if (thread_of_event(i - 1) != tid)
            continue;
        perfclock::Position boundary{i, {}};
        return previous_instruction(boundary, boundary == p ? at : std::nullopt);
    }
    return std::nullopt;
}

uint64_t DebugSession::search_steps(const perfclock::Position& base, const perfclock::Segment& arrival)
{
    debug_log("search from %s", base.describe().c_str());
    restore_for(base);
    search_steps_ = 0;
    search_counter_.reset();
    arrival_hook_ = [this, arrival] {
        search_arrival_ = arrival;
        begin_search();
        return AfterArrival::Step;
    };
    uint64_t steps = 0;
    try {
        execute();
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "stepping from " + base.describe() + " never arrived where the debugger stopped");
    } catch (const SearchDone& d) {
        steps = d.steps;
    }
    search_arrival_.reset();
    search_counter_.reset();
    mode_ = Mode::Forward;
    stop_single_stepping();
    debug_log("  %llu steps", static_cast<unsigned long long>(steps));
    return steps;
}

} // namespace rw::replay
