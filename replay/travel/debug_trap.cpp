// The debugger's traps: which of the session's breakpoints, watchpoints,
// counters or steps a SIGTRAP of the debugged process is, and what that
// means in each mode (forward, seeking a position, collecting hits for
// reverse-continue, searching by single steps).
#include <sys/ptrace.h>

#include "debug_session.h"

namespace rw::replay {

namespace {

// A task as the int3 counters see it.
class CountedTask : public perfclock::TrappedThread {
public:
    explicit CountedTask(Task& task) : task_(task) {}
    pid_t tid() const override { return task_.tid(); }
    bool single_stepping() const override { return task_.single_stepping; }
    Registers regs() override { return task_.regs(); }
    void set_regs(const Registers& regs) override { task_.set_regs(regs); }

private:
    Task& task_;
};

} // namespace

DebugHook::Then DebugSession::on_trap(Task& task, const siginfo_t& info)
{
    if (!is_debugged(task))
        return Then::NotMine;
    if (info.si_code == kTrapPerf && perf_data(info) == kTagSample) {
        // (An alarm of a sampling run that is over, or one that rang while
        // rewind's own syscall ran: the next one rings after the thread ran
        // that long again.)
        if (!sampling_ || engine_.injecting())
            return Then::Resume;
        bool stepping = task.last_resume_stepped;
        on_interrupt(task);
        return stepping ? Then::Step : Then::Resume;
    }
    // An int3 counting in place of a debug register: counted and stepped
    // over here, or its stop handled as the perf trap it stands for.
    CountedTask counted(task);
    perfclock::SoftCounters::Claim c = soft_counters_.claim(counted, info);
    switch (c.kind) {
    case perfclock::SoftCounters::Claim::Kind::Handled:
        return c.then == perfclock::AfterTrap::Step ? Then::Step : Then::Resume;
    case perfclock::SoftCounters::Claim::Kind::Fired: {
        Then then = handle_trap(task, c.info);
        if (query_)
            note_query_hits(task);
        return soft_counters_.step_after_fired(counted, then == Then::Step) ? Then::Step : then;
    }
    case perfclock::SoftCounters::Claim::Kind::NotOurs:
        break;
    }
    Then then = handle_trap(task, info);
    if (query_)
        note_query_hits(task);
    return then;
}

DebugHook::Then DebugSession::handle_trap(Task& task, const siginfo_t& info)
{
    if (info.si_code == kTrapPerf && perf_data(info) == kTagEngine)
        return Then::NotMine;
    Registers regs = task.regs();
    uint64_t rip = regs[Registers::RIP];

    // Which trap is it?
    // A single step; or a step that delivered a signal, which stops at the
    // handler's first instruction (the kernel reports it with si_code SIGTRAP).
    bool step = info.si_code == kTrapTrace || info.si_code == SIGTRAP;
    if (mode_ == Mode::Backstep) {
        current_tid_ = task.recorded_tid();
        return backstep_trap(task, info, step);
    }
    bool target = info.si_code == kTrapPerf && perf_data(info) == kTagTarget;
    if (soft_target_.stepping && step) {
        // The step over the target's int3 is done: put it back.
        soft_target_.stepping = false;
        insert_soft_target(task);
        if (mode_ == Mode::Seek || (mode_ == Mode::Collect && !stepping_over_ && steps_left_ == 0))
            return Then::Resume;
    }
    if (soft_target_.addr && info.si_code == SI_KERNEL && rip - 1 == soft_target_.addr &&
        soft_target_.pid == task.tid()) {
        regs[Registers::RIP] = rip - 1;
        task.set_regs(regs);
        remove_soft_target(task);
        if (--soft_target_.left > 0) {
            soft_target_.stepping = true;
            return Then::Step;
        }
        soft_target_ = {};
        return segment_reached();
    }
    std::optional<HardwareBreakpoint> hw;
    if (info.si_code == kTrapPerf && !target)
        hw = breakpoints_.hardware_for_tag(perf_data(info));
    // A watchpoint hit by a single-stepped instruction shows only in its count.
    bool hit_while_stepping = false;
    if (!breakpoints_.hardware().empty() && breakpoints_.applied_to(task.group().tgid)) {
        std::optional<HardwareBreakpoint> counted = breakpoints_.counted_since_last(task.tid());
        if (step && !hw && counted && counted->kind != perfclock::BreakpointKind::Execute) {
            hw = counted;
            hit_while_stepping = true;
        }
    }
    bool software =
        info.si_code == SI_KERNEL && breakpoints_.has_software(rip - 1) && breakpoints_.applied_to(task.group().tgid);
    bool probe_from =
        (probe_ && info.si_code == kTrapPerf &&
         (perf_data(info) == kTagProbe || perf_data(info) == kTagCountCap || perf_data(info) == kTagWriteCap)) ||
        (labelling_ && info.si_code == kTrapPerf && perf_data(info) == kTagLabel);
    if (!step && !target && !hw && !software && !probe_from) {
        if (info.si_code == kTrapPerf)
            return Then::Resume; // a counter of an abandoned seek
        return Then::NotMine;
    }
    if (software) {
        regs[Registers::RIP] = rip - 1;
        task.set_regs(regs);
        rip -= 1;
    }
    current_tid_ = task.recorded_tid();
    // The task rests where a Break segment arrived, before that execution
    // of the instruction: its trap there is the execution already counted.
    bool same_execution =
        resting_on_ && rip == resting_on_ && (software || (hw && hw->kind == perfclock::BreakpointKind::Execute));
    resting_on_ = 0;

    switch (mode_) {
    case Mode::Forward: {
        if (target)
            return Then::Resume; // stale
        if (stepping_over_ && step) {
            breakpoints_.add_software(stepping_over_);
            breakpoints_.apply(task);
            stepping_over_ = 0;
        }
        if (same_execution) {
            if (software)
                step_over(task, rip);
            return software ? Then::Step : Then::Resume;
        }
        StopReport r;
        r.tid = current_tid_;
        if (software) {
            position_.extend(perfclock::Segment::brk(rip, 1));
            r.kind = StopReport::Kind::SoftwareBreak;
            resting_on_ = rip;
        } else if (hw && hw->kind == perfclock::BreakpointKind::Execute) {
            position_.extend(perfclock::Segment::brk(rip, 1));
            r.kind = StopReport::Kind::HardwareBreak;
            rest_on(task, rip);
        } else if (hw) {
            // (After a single step, the same point as that step's end.)
            uint8_t access = hw->kind == perfclock::BreakpointKind::Write ? 1 : 2;
            position_.extend(perfclock::Segment::watch(hw->addr, hw->len, access, 1));
            r.kind = StopReport::Kind::Watch;
            r.watch_addr = hw->addr;
            r.watch_access = access;
        } else {
            if (!step_pending_)
                return Then::Resume; // a step we did not ask for
            position_.extend(perfclock::Segment::step(1));
            r.kind = StopReport::Kind::Step;
        }
        step_pending_ = false;
        snapshot_stop();
        breakpoints_.apply(task);
        return ask(r);
    }
    case Mode::Seek: {
        if (labelling_ && info.si_code == kTrapPerf && perf_data(info) == kTagLabel)
            return label_trap(task);
        if (probe_ && info.si_code == kTrapPerf && perf_data(info) == kTagCountCap)
            throw NoSuchPosition(fmt_count_cap(rip));
        if (probe_ && info.si_code == kTrapPerf && perf_data(info) == kTagWriteCap)
            throw NoSuchPosition(fmt_write_cap());
        bool from_reached = info.si_code == kTrapPerf && perf_data(info) == kTagProbe;
        Then probe_then = Then::Resume;
        if (probe_ && (from_reached || (step && !target)))
            probe_then = probe_trap(step, from_reached);
        if (from_reached)
            return probe_then;
        if (target || (step && steps_left_ > 0))
            return segment_reached();
        return probe_then;
    }
    case Mode::Backstep:
        return Then::Resume; // handled above
    case Mode::Search: {
        if (!step)
            return Then::Resume;
        search_steps_++;
        const perfclock::Segment& a = *search_arrival_;
        bool arrived = false;
        if (a.kind == perfclock::Segment::Kind::Break) {
            arrived = rip == a.addr;
        } else if (a.kind == perfclock::Segment::Kind::Watch && search_counter_) {
            uint64_t n = search_counter_->count();
            arrived = n > search_counter_seen_;
            search_counter_seen_ = n;
        }
        if (arrived)
            throw SearchDone{search_steps_};
        trail_.stepped(rip);
        return Then::Step;
    }
    case Mode::Collect: {
        if (hit_while_stepping && !(steps_left_ == 1 && segment_ + 1 == target_.path.size())) {
            // Inside a stretch of steps: the watched access of this step is
            // a hit (at the final step it is the target itself).
            uint8_t access = hw->kind == perfclock::BreakpointKind::Write ? 1 : 2;
            uint64_t n = ++hit_counts_[hw->addr ^ 0x8000000000000000ull];
            perfclock::Segment w = perfclock::Segment::watch(hw->addr, hw->len, access, n);
            hits_.push_back({position_.with(w), StopReport::Kind::Watch, hw->addr, access,
                             Arrival{task.regs(), candidates_before(w, task)}});
        }
        if (hit_while_stepping)
            hw.reset(); // the rest is the step's
        if (target || (step && steps_left_ > 0 && !stepping_over_)) {
            // Watchpoint hits at the target itself are the target, not a hit.
            return segment_reached();
        }
        if (stepping_over_ && step) {
            breakpoints_.add_software(stepping_over_);
            breakpoints_.apply(task);
            stepping_over_ = 0;
            return steps_left_ > 0 ? Then::Step : Then::Resume;
        }
        if (same_execution) {
            if (software)
                step_over(task, rip);
            return software || steps_left_ > 0 ? Then::Step : Then::Resume;
        }
        if (software) {
            uint64_t n = ++hit_counts_[rip];
            hits_.push_back({position_.with(perfclock::Segment::brk(rip, n)), StopReport::Kind::SoftwareBreak, rip, 1,
                             std::nullopt});
            step_over(task, rip);
            return Then::Step;
        }
        if (hw) {
            if (hw->kind == perfclock::BreakpointKind::Execute) {
                uint64_t n = ++hit_counts_[rip];
                hits_.push_back({position_.with(perfclock::Segment::brk(rip, n)), StopReport::Kind::HardwareBreak, rip,
                                 1, std::nullopt});
            } else {
                uint8_t access = hw->kind == perfclock::BreakpointKind::Write ? 1 : 2;
                uint64_t n = ++hit_counts_[hw->addr ^ 0x8000000000000000ull];
                perfclock::Segment w = perfclock::Segment::watch(hw->addr, hw->len, access, n);
                hits_.push_back({position_.with(w), StopReport::Kind::Watch, hw->addr, access,
                                 Arrival{task.regs(), candidates_before(w, task)}});
            }
        }
        return steps_left_ > 0 ? Then::Step : Then::Resume;
    }
    }
    return Then::Resume;
}

void DebugSession::step_over(Task& task, uint64_t addr)
{
    // Out for one instruction; back in at the step's trap (or the next event).
    breakpoints_.remove_software(addr);
    breakpoints_.apply(task);
    stepping_over_ = addr;
}

void DebugSession::end_step_over()
{
    if (!stepping_over_)
        return;
    breakpoints_.add_software(stepping_over_);
    stepping_over_ = 0;
    if (Task* t = debugged_task(); t && (mode_ == Mode::Forward || mode_ == Mode::Collect))
        breakpoints_.apply(*t);
}

} // namespace rw::replay
