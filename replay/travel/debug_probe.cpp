// Probes for tools that search the recording (rewind watch): going to the
// end of history, counting how often instructions run between two
// positions, counting the single steps between two positions. Each leaves
// the replay at the second position and says what it found as JSON.
#include <sys/prctl.h>

#include <chrono>

#include "debug_session.h"
#include "breakpoint_filters.h"
#include "json_bytes.h"
#include "nlohmann/json.hpp"
#include "steady_now.h"

namespace rw::replay {
namespace {

// Writes a probe counts at most (see start_probe).
constexpr uint64_t kWriteCountMost = 1 << 13;

} // namespace

std::optional<uint64_t> DebugSession::final_exit_event()
{
    auto exit_of_program = [&](uint64_t i) -> std::optional<ExitEvent> {
        auto e = event_at(i);
        const auto* exit = e ? std::get_if<ExitEvent>(&*e) : nullptr;
        if (exit && exit->tgid == debugged_tgid_)
            return *exit;
        return std::nullopt;
    };
    for (uint64_t i = total_events(); i-- > begin_.event;) {
        auto exit = exit_of_program(i);
        if (!exit || !exit->group_dead)
            continue;
        // The other threads' exits just before it ended with it (a fatal
        // signal, exit_group): before the first of them, all still exist.
        while (i > begin_.event && exit_of_program(i - 1))
            i--;
        return i;
    }
    return std::nullopt;
}

void DebugSession::begin_probe(const ResumeRequest& r, const StopReport& report)
{
    probe_result_.clear();
    switch (r.kind) {
    case ResumeRequest::Kind::GotoEnd: {
        if (end_) {
            seek(*end_, report);
            return;
        }
        auto exit = final_exit_event();
        // A recording that ended with a detach: its end is its last event.
        if (!exit && trace_.end() && trace_.end()->detached && trace_.end()->events > begin_.event)
            exit = trace_.end()->events - 1;
        if (!exit)
            throw ReplayError(ReplayErrorKind::Refused, position_.event, current_tid_,
                              "the recording does not show the program's end");
        seek(perfclock::Position{*exit, {}}, report);
        arrival_hook_ = [this] {
            if (position_.path.empty())
                if (auto insn = engine_.stop_before_exit_call())
                    position_.extend(perfclock::Segment::brk(*insn, 1));
            end_ = position_;
            return AfterArrival::Report;
        };
        return;
    }
    case ResumeRequest::Kind::Count:
    case ResumeRequest::Kind::Steps: {
        // FROM and TO share a prefix C; TO is C and one more segment, FROM
        // is C or C and one segment. Seek C; from there TO is the target and
        // FROM is trapped on the way, where counting starts.
        const perfclock::Position& from = *r.from;
        const perfclock::Position& to = *r.to;
        perfclock::Position common{to.event, {}};
        size_t n = 0;
        while (n < from.path.size() && n < to.path.size() && from.path[n] == to.path[n])
            common.path.push_back(from.path[n++]);
        bool shaped = from.event == to.event && to.path.size() == n + 1 && from.path.size() <= n + 1;
        if (!shaped)
            throw NoSuchPosition("a probe needs two positions of one stretch that differ in their last segment");
        probe_ = std::make_unique<Probe>();
        probe_->kind = r.kind;
        probe_->addrs = r.addrs;
        probe_->writes = r.writes;
        probe_->writes_most = r.most && r.kind == ResumeRequest::Kind::Count ? r.most : kWriteCountMost;
        probe_->steps_most = r.kind == ResumeRequest::Kind::Steps ? r.most : 0;
        if (from.path.size() == n + 1)
            probe_->from_segment = from.path[n];
        probe_->from = from;
        seek(common, report);
        arrival_hook_ = [this, to] {
            if (probe_->from_segment)
                arm_probe_from(*probe_->from_segment);
            else
                start_probe();
            retarget(to);
            arrival_hook_ = [this] {
                finish_probe();
                return AfterArrival::Report;
            };
            return AfterArrival::Continue;
        };
        return;
    }
    case ResumeRequest::Kind::Sample: {
        auto [anchors, ran] = sample(*r.from, r.value, std::chrono::nanoseconds(r.span_ns));
        nlohmann::json j;
        j["anchors"] = anchors;
        j["ran_us"] = ran; // where each landed: interrupts come late, by varying amounts
        probe_result_ = dump_for_display(j);
        seek(anchors.empty() ? *r.from : *perfclock::Position::parse(anchors.back()), report);
        return;
    }
    case ResumeRequest::Kind::Label: {
        perfclock::Position found = label(*r.from, *r.to);
        probe_result_ = nlohmann::json{{"position", found.serialize()}}.dump();
        seek(found, report);
        return;
    }
    case ResumeRequest::Kind::Query: {
        probe_result_ = run_query(r);
        seek(r.from.value_or(begin_), report);
        return;
    }
    default:
        break;
    }
}

} // namespace rw::replay

namespace rw::replay {

void DebugSession::arm_probe_from(const perfclock::Segment& s)
{
    Task* t = runner();
    if (!t)
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_, "the debugged process is gone");
    switch (s.kind) {
    case perfclock::Segment::Kind::Break:
        probe_->from_trap.emplace(soft_counters_, t->tid(), s.addr, s.count + (s.addr == resting_on_ ? 1 : 0),
                                  kTagProbe);
        probe_->from_resting = s.addr;
        break;
    case perfclock::Segment::Kind::Step:
        probe_->steps_to_from = s.count;
        engine_.set_single_stepping(*t, true);
        break;
    default:
        throw NoSuchPosition("a probe cannot start at a watchpoint or event segment");
    }
}

void DebugSession::copy_shared_pages(Task& t)
{
    auto start = steady_now();
    uint64_t bytes = engine_.copy_shared_pages(t);
    debug_log("  copied %llu KiB shared with the snapshot in %.1f ms", static_cast<unsigned long long>(bytes >> 10),
              std::chrono::duration<double, std::milli>(steady_now() - start).count());
}

void DebugSession::start_probe()
{
    Task* t = runner();
    if (!t)
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_, "the debugged process is gone");
    // A run timed from a restored snapshot would also time the copies of
    // the pages it writes first (none of them were copies when recorded).
    // (Write counters stop no thread: the kernel counts each in its debug
    // exception, and the run is timed as well.)
    if (probe_->kind == ResumeRequest::Kind::Count && probe_->addrs.empty())
        copy_shared_pages(*t);
    probe_->started = true;
    probe_->start = steady_now();
    perfclock::try_start_task_clock(probe_->clock, t->tid());
    probe_->from_trap.reset();
    uint64_t resting = probe_->from_segment ? probe_->from_resting : resting_on_;
    if (probe_->kind == ResumeRequest::Kind::Count) {
        for (uint64_t a : probe_->addrs) {
            refuse_count_at_switch_point(a);
            probe_->counters.emplace_back(soft_counters_, t->tid(), a,
                                          perfclock::breakpoints_work() ? 0 : kSoftCountMost + 1, kTagCountCap);
            // Resting on it: the counter sees that execution, which the position counted already.
            probe_->resting.push_back(a == resting ? 1 : 0);
        }
        // Each write counted is a debug exception the kernel handles (about
        // 10 us in our VMs): a place written in a hot loop is not worth it.
        for (auto [addr, len] : probe_->writes)
            probe_->write_counters.emplace_back(t->tid(), perfclock::BreakpointKind::Write, addr, len,
                                                probe_->writes_most + 1, kTagWriteCap);
    } else {
        engine_.set_single_stepping(*t, true);
    }
}

DebugHook::Then DebugSession::probe_trap(bool step, bool from_reached)
{
    Probe& p = *probe_;
    if (from_reached) {
        start_probe();
        return p.kind == ResumeRequest::Kind::Steps ? Then::Step : Then::Resume;
    }
    if (!step)
        return Then::Resume;
    if (p.started) {
        if (p.kind == ResumeRequest::Kind::Steps && ++p.steps > p.steps_most && p.steps_most)
            throw NoSuchPosition("counting stopped: more than " + std::to_string(p.steps_most) + " instructions");
    } else if (p.steps_to_from > 0 && --p.steps_to_from == 0) {
        start_probe();
    }
    return Then::Step;
}

std::string DebugSession::fmt_write_cap() const
{
    uint64_t most = probe_ ? probe_->writes_most : kWriteCountMost;
    return "counting stopped: more than " + std::to_string(most) + " writes to a watched range";
}

void DebugSession::finish_probe()
{
    Probe& p = *probe_;
    nlohmann::json j;
    if (!p.started) {
        j["error"] = "the probe's end comes before its start";
    } else if (p.kind == ResumeRequest::Kind::Count) {
        nlohmann::json counts = nlohmann::json::array();
        for (size_t i = 0; i < p.counters.size(); i++)
            counts.push_back(p.counters[i].count() - p.resting[i]);
        j["counts"] = counts;
        nlohmann::json writes = nlohmann::json::array();
        for (const auto& c : p.write_counters)
            writes.push_back(c.count());
        j["writes"] = writes;
    } else {
        j["steps"] = p.steps;
    }
    if (p.started) {
        // The thread's running time where it can be had: the measure
        // sampling runs plan by (wall-clock time adds the tracer's stops).
        j["seconds"] = p.clock ? std::chrono::duration<double>(p.clock->elapsed()).count()
                               : std::chrono::duration<double>(steady_now() - p.start).count();
    }
    j["position"] = position_.serialize();
    probe_result_ = dump_for_display(j);
    stop_single_stepping();
    probe_.reset();
    snapshot_stop();
}

} // namespace rw::replay

namespace rw::replay {

std::pair<std::vector<std::string>, std::vector<double>>
DebugSession::sample(const perfclock::Position& from, uint64_t count, std::chrono::nanoseconds span)
{
    // Native running, interrupted now and then: each interrupt leaves a
    // snapshot of the state it found, ordered, but with no count to name it.
    debug_log("sample from %s: %llu anchors over %.3f ms", from.describe().c_str(),
              static_cast<unsigned long long>(count), span.count() / 1e6);
    restore_for(from);
    sampling_ = std::make_unique<Sampling>();
    sampling_->run = ++sampling_runs_;
    sampling_->wanted = count;
    sampling_->spacing =
        std::max<std::chrono::nanoseconds>(span / static_cast<int64_t>(count + 1), std::chrono::microseconds(20));
    sampling_->event = from.event;
    arrival_hook_ = [this] {
        if (Task* t = runner()) {
            copy_shared_pages(*t);
            arm_sampling_alarm(*t);
        }
        sampling_->started = steady_now();
        retarget(perfclock::Position{sampling_->event + 1, {}});
        arrival_hook_ = []() -> AfterArrival { throw SamplingDone{}; };
        return AfterArrival::Continue;
    };
    // The interrupt is sent when a wait times out: with the default timer
    // slack (50 us) that comes late by more than the shortest spans asked.
    int slack = ::prctl(PR_GET_TIMERSLACK);
    ::prctl(PR_SET_TIMERSLACK, 1UL);
    try {
        execute();
    } catch (const SamplingDone&) {
    } catch (...) {
        ::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack));
        engine_.cancel_interrupt();
        sampling_.reset(); // its alarm with it
        arrival_hook_ = nullptr;
        throw;
    }
    ::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(slack));
    engine_.cancel_interrupt();
    sampling_->clock.reset();
    arrival_hook_ = nullptr;
    std::vector<std::string> anchors = std::move(sampling_->anchors);
    std::vector<double> ran = std::move(sampling_->ran_us);
    sampling_.reset();
    mode_ = Mode::Forward;
    debug_log("  %zu anchors", anchors.size());
    return {anchors, ran};
}

void DebugSession::on_interrupt(Task& task)
{
    if (!sampling_) {
        // The forward run's look for the debugger (execute()).
        if (mode_ == Mode::Forward && frontend_->gone())
            throw SessionEnd{};
        if (mode_ == Mode::Forward)
            engine_.interrupt_after(task, kLookForDebuggerEvery);
        return;
    }
    if (position_.event != sampling_->event || !is_debugged(task))
        return; // late: the sampling is over
    // Where it landed, before the snapshot: taking one is not running.
    double ran_us = sampling_ran_us();
    sampling_->clock.reset(); // no alarm while the snapshot's fork is injected
    if (engine_.can_snapshot()) {
        const auto& e = timeline_.add_anchor(sampling_->event, sampling_->run, sampling_->anchors.size() + 1,
                                             engine_.take_snapshot(false));
        sampling_->anchors.push_back(e.pos.serialize());
        sampling_->ran_us.push_back(ran_us);
        if (sampling_->anchors.size() >= sampling_->wanted)
            throw SamplingDone{};
    }
    sampling_->clock_base_us = ran_us;
    arm_sampling_alarm(task);
}

void DebugSession::arm_sampling_alarm(Task& task)
{
    if (!perfclock::try_start_task_clock(sampling_->clock, task.tid(), sampling_->spacing, kTagSample))
        engine_.interrupt_after(task, sampling_->spacing);
}

double DebugSession::sampling_ran_us() const
{
    if (sampling_->clock)
        return sampling_->clock_base_us +
               std::chrono::duration<double, std::micro>(sampling_->clock->elapsed()).count();
    return std::chrono::duration<double, std::micro>(steady_now() - sampling_->started).count();
}

perfclock::Position DebugSession::label(const perfclock::Position& from, const perfclock::Position& anchored)
{
    // The anchor itself, or a position reached from it by one more segment
    // (where a call returns, say): an instruction executed less often than
    // the one an interrupt happened to stop at is cheaper to count.
    const Timeline::Entry* a = anchored.anchored() ? timeline_.anchor(anchored.path[0]) : nullptr;
    bool beyond = anchored.path.size() == 2 && anchored.path[1].kind == perfclock::Segment::Kind::Break;
    if (anchored.anchored() && !a)
        throw NoSuchPosition(snapshot_gone(anchored));
    if (!a || (anchored.path.size() != 1 && !beyond) || from.event != anchored.event)
        throw NoSuchPosition("cannot name " + anchored.describe() + " from " + from.describe());
    Registers want;
    if (beyond) {
        struct Arrived {
            Registers regs;
        };
        restore_for(anchored);
        arrival_hook_ = [this]() -> AfterArrival {
            Task* t = runner();
            if (!t)
                throw NoSuchPosition("the debugged process is gone");
            throw Arrived{t->regs()};
        };
        try {
            execute();
        } catch (const Arrived& arrived) {
            want = arrived.regs;
        }
        arrival_hook_ = nullptr;
    } else {
        const ReplaySnapshot::TaskCopy* copy = nullptr;
        for (const auto& c : a->snapshot->tasks)
            if (c.recorded_tid == current_tid_ || (!copy && c.recorded_tid == program_.tid))
                copy = &c;
        if (!copy)
            throw NoSuchPosition("the snapshot of " + anchored.describe() + " has no debugged thread");
        want = copy->regs;
    }
    debug_log("label %s from %s", anchored.describe().c_str(), from.describe().c_str());
    labelling_ = std::make_unique<Labelling>();
    labelling_->want = want;
    labelling_->rip = want[Registers::RIP];
    labelling_->from = from;
    restore_for(from);
    arrival_hook_ = [this] {
        Task* t = runner();
        if (!t)
            throw NoSuchPosition("the debugged process is gone");
        labelling_->skip_resting = resting_on_ == labelling_->rip;
        refuse_count_at_switch_point(labelling_->rip);
        labelling_->trap.emplace(soft_counters_, t->tid(), labelling_->rip, 1, kTagLabel);
        // (The filter counts the execution the start rests on too.)
        uint64_t resting = labelling_->skip_resting ? 1 : 0;
        if (const perfclock::BreakpointCounter* hw = labelling_->trap->hardware())
            if (RegisterMatchFilter* filter = RegisterMatchFilter::get())
                labelling_->filtered =
                    filter->attach(hw->fd(), labelling_->want, kLabelMostByDebugRegister + 1 + resting);
        debug_log("  %s",
                  labelling_->filtered ? "registers compared by the filter" : "registers compared at each stop");
        retarget(perfclock::Position{labelling_->from.event + 1, {}});
        arrival_hook_ = []() -> AfterArrival { throw NoSuchPosition("the snapshot's state never comes again"); };
        return AfterArrival::Continue;
    };
    // However the run ends (found, or NoSuchPosition), its counter goes:
    // an int3 left planted would outlive the process it was planted in.
    struct Done {
        DebugSession& s;
        ~Done()
        {
            s.arrival_hook_ = nullptr;
            s.labelling_.reset();
        }
    } done{*this};
    perfclock::Position found;
    try {
        execute();
    } catch (const LabelDone& d) {
        found = d.found;
    }
    mode_ = Mode::Forward;
    debug_log("  %s", found.describe().c_str());
    return found;
}

DebugHook::Then DebugSession::label_trap(Task& task)
{
    Labelling& l = *labelling_;
    if (l.skip_resting) {
        l.skip_resting = false; // the execution the start rests on was counted already
        l.resting = 1;
        if (!l.filtered || l.trap->count() == 1)
            return Then::Resume;
    }
    l.traps++;
    // Each execution is a trap where no filter compares the registers in
    // the kernel (int3s, debug registers without it, or a kernel that
    // delivers the filter's dropped traps all the same): an anchor a hot
    // instruction reaches only after many is not worth naming. The search
    // gallops over those executions instead, where a debug register counts
    // them without a stop.
    uint64_t most = !l.trap || !l.trap->by_debug_register() ? kLabelMost : kLabelMostByDebugRegister;
    if (l.traps > most)
        throw NoSuchPosition(fmt_count_cap(l.rip, most));
    // Filtered, the counter says how many executions the trap comes after.
    l.hits = l.filtered ? l.trap->count() - l.resting : l.traps;
    if (l.filtered && l.hits > kLabelMostByDebugRegister)
        throw NoSuchPosition(fmt_count_cap(l.rip, kLabelMostByDebugRegister));
    Registers now = task.regs();
    for (size_t i = 0; i < Registers::kCount; i++)
        if (i != Registers::EFLAGS && i != Registers::ORIG_RAX && now.words[i] != l.want.words[i])
            return Then::Resume;
    throw LabelDone{l.from.with(perfclock::Segment::brk(l.rip, l.hits))};
}

} // namespace rw::replay
