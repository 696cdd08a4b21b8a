// Finding the instruction before a position without single-stepping from
// its segment's start (which may be millions of instructions away): the
// instructions that can have run just before are few (the one that falls
// through to it, the call that lands on it, the one that wrote a watched
// location). One replay of the stretch with a trap on each of them finds
// the execution that leads to the arrival, judged from the registers and
// memory before it runs; a snapshot there and one single step confirm it.
#include <sys/ptrace.h>

#include "breakpoint_filters.h"
#include "debug_session.h"

namespace rw::replay {
namespace {

// Debug registers besides the arrival's counter: candidates tried per replay.
constexpr size_t kCandidatesPerRound = 3;
// Rounds at most: each replays the stretch once, at full speed.
constexpr size_t kMaxCandidates = 4 * kCandidatesPerRound;

perfclock::BreakpointKind counter_kind(const perfclock::Segment& s)
{
    if (s.kind == perfclock::Segment::Kind::Break)
        return perfclock::BreakpointKind::Execute;
    return s.access == 1 ? perfclock::BreakpointKind::Write : perfclock::BreakpointKind::ReadWrite;
}

} // namespace

std::vector<uint64_t> DebugSession::candidates_before(const perfclock::Segment& arrival, Task& task)
{
    const Registers& regs = task.regs();
    TraceeMemory mem = task.memory();
    MemoryReader read = [&](uint64_t addr, std::span<uint8_t> out) {
        if (!mem.read(RemoteAddr(addr), out))
            return false;
        breakpoints_.hide(addr, out);
        return true;
    };
    std::vector<uint64_t> out;
    if (arrival.kind == perfclock::Segment::Kind::Break)
        out = predecessor_candidates(decoder_, regs[Registers::RIP], regs, read);
    else if (arrival.kind == perfclock::Segment::Kind::Watch && arrival.access == 1)
        out = writer_candidates(decoder_, regs[Registers::RIP], regs, read, arrival.addr, arrival.len);
    if (out.size() > kMaxCandidates)
        out.resize(kMaxCandidates);
    return out;
}

std::optional<perfclock::Position> DebugSession::backstep(const perfclock::Position& base,
                                                          const perfclock::Segment& arrival,
                                                          const std::vector<uint64_t>& candidates,
                                                          const Arrival& at_arrival, std::optional<uint64_t> slot)
{
    if ((candidates.empty() && !slot) ||
        (arrival.kind != perfclock::Segment::Kind::Break && arrival.kind != perfclock::Segment::Kind::Watch))
        return std::nullopt;
    debug_log("backstep from %s, %zu candidates", base.describe().c_str(), candidates.size());
    restore_for(base);
    arrival_hook_ = [this] {
        begin_backstep();
        return AfterArrival::Continue;
    };
    backstep_ = std::make_unique<Backstep>();
    backstep_->base = base;
    backstep_->arrival = arrival;
    backstep_->candidates = candidates;
    backstep_->at_arrival = at_arrival;
    backstep_->slot = slot;
    std::optional<perfclock::Position> found;
    try {
        execute();
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "replaying from " + base.describe() + " never arrived where the debugger stopped");
    } catch (const BackstepDone& d) {
        found = d.found;
        after_slot_write_ = d.after_slot_write;
    } catch (...) {
        backstep_.reset();
        mode_ = Mode::Forward;
        throw;
    }
    backstep_.reset();
    mode_ = Mode::Forward;
    debug_log("  %s", found ? found->describe().c_str() : "none of them");
    return found;
}

std::optional<perfclock::Position> DebugSession::backstep_in_rounds(const perfclock::Position& base,
                                                                    const perfclock::Segment& arrival,
                                                                    const std::vector<uint64_t>& candidates,
                                                                    const Arrival& at_arrival)
{
    for (size_t i = 0; i < candidates.size(); i += kCandidatesPerRound) {
        std::vector<uint64_t> round(candidates.begin() + static_cast<long>(i),
                                    candidates.begin() +
                                        static_cast<long>(std::min(candidates.size(), i + kCandidatesPerRound)));
        if (auto found = backstep(base, arrival, round, at_arrival))
            return found;
    }
    return std::nullopt;
}

std::optional<uint64_t> DebugSession::callee_returning(const perfclock::Position& base,
                                                       const perfclock::Segment& arrival, const Arrival& at_arrival)
{
    if (arrival.kind != perfclock::Segment::Kind::Break)
        return std::nullopt;
    Task* t = runner();
    if (!t)
        return std::nullopt;
    TraceeMemory mem = t->memory();
    MemoryReader read = [&](uint64_t addr, std::span<uint8_t> out) {
        if (!mem.read(RemoteAddr(addr), out))
            return false;
        breakpoints_.hide(addr, out);
        return true;
    };
    if (!follows_call(decoder_, arrival.addr, read))
        return std::nullopt;
    after_slot_write_ = 0;
    backstep(base, arrival, {}, at_arrival, at_arrival.regs[Registers::RSP] - 8);
    if (!after_slot_write_)
        return std::nullopt;
    return after_slot_write_;
}

void DebugSession::begin_backstep()
{
    Task* t = runner();
    if (!t)
        throw ReplayError(ReplayErrorKind::Divergence, position_.event, current_tid_,
                          "the debugged process is gone at " + position_.describe());
    mode_ = Mode::Backstep;
    breakpoints_.lift(*t); // the debug registers are the backstep's
    Backstep& b = *backstep_;
    b.resting = resting_on_;
    const perfclock::Segment& a = b.arrival;
    // The arrival's own counter stops the thread at the arrival itself:
    // reaching it means no candidate was the one.
    uint64_t resting_extra = a.kind == perfclock::Segment::Kind::Break && a.addr == b.resting ? 1 : 0;
    b.arrival_counter.emplace(t->tid(), counter_kind(a), a.addr, a.kind == perfclock::Segment::Kind::Break ? 8 : a.len,
                              a.count + resting_extra, kTagTarget);
    b.arrival_offset = resting_extra;
    for (size_t i = 0; i < b.candidates.size(); i++)
        b.traps.emplace_back(t->tid(), perfclock::BreakpointKind::Execute, b.candidates[i], 8, 1, kTagCandidate + i);
    if (b.slot)
        b.slot_watch.emplace(t->tid(), perfclock::BreakpointKind::Write, *b.slot, 8, 1, kTagSlot);
    b.executions.assign(b.candidates.size(), 0);
    filter_candidates(*t);
}

void DebugSession::filter_candidates(Task& task)
{
    // A store in a hot loop runs thousands of times before the one write
    // that is the arrival: judged in the kernel, the others do not stop.
    Backstep& b = *backstep_;
    const perfclock::Segment& a = b.arrival;
    if (a.kind != perfclock::Segment::Kind::Watch || a.access != 1 || b.candidates.empty() ||
        b.candidates.size() > WriteMatchFilter::kMostCandidates)
        return;
    WriteMatchFilter* filter = WriteMatchFilter::get();
    if (!filter)
        return;
    TraceeMemory mem = task.memory();
    std::vector<WriteForm> forms;
    for (uint64_t c : b.candidates) {
        uint8_t code[16] = {};
        size_t n = mem.read_partial(RemoteAddr(c), code);
        breakpoints_.hide(c, {code, n});
        auto form = decoder_.write_form(c, {code, n});
        if (!form)
            return; // one the filter cannot judge: each stops, as without it
        forms.push_back(*form);
    }
    // Past the limit the filter lets every execution through, and the
    // stops that follow end the backstep.
    filter->prepare(forms, a.addr, a.addr + a.len, kBackstepMostFiltered + 1);
    // Once one is filtered its stops skip executions: all are counted by
    // their counters then (which count every execution, filtered or not).
    for (auto& trap : b.traps)
        if (filter->attach(trap.fd()))
            b.filtered = true;
    if (b.filtered)
        debug_log("  candidates judged by the write filter");
}

DebugHook::Then DebugSession::backstep_trap(Task& task, const siginfo_t& info, bool step)
{
    Backstep& b = *backstep_;
    uint64_t arrivals = b.arrival_counter->count() - b.arrival_offset;
    if (b.verifying) {
        // One step after the chosen execution: is this the arrival? (An
        // instruction breakpoint counts when the instruction runs, a data
        // breakpoint when the write is done.)
        b.verifying = false;
        Registers now = task.regs();
        uint64_t expected = b.arrival.kind == perfclock::Segment::Kind::Break ? b.arrival.count - 1 : b.arrival.count;
        const Registers& want = b.at_arrival.regs;
        bool same = now[Registers::RIP] == want[Registers::RIP] && arrivals == expected;
        for (size_t i = 0; same && i < Registers::kCount; i++)
            if (i != Registers::EFLAGS && i != Registers::ORIG_RAX &&
                !(b.at_arrival.syscall_clobbered && (i == Registers::RCX || i == Registers::R11)))
                same = now.words[i] == want.words[i];
        if (same)
            throw BackstepDone{b.chosen};
        return Then::Resume; // not it: go on (the counters saw that step)
    }
    if (info.si_code != kTrapPerf)
        return step ? Then::Resume : Then::NotMine;
    uint64_t tag = perf_data(info);
    if (tag == kTagTarget)
        throw BackstepDone{std::nullopt, b.after_slot_write}; // at the arrival: no candidate led to it
    if (tag == kTagSlot) {
        b.after_slot_write = task.regs()[Registers::RIP];
        return Then::Resume;
    }
    if (tag < kTagCandidate || tag >= kTagCandidate + b.candidates.size())
        return Then::Resume;
    if (backstep_most_traps_ && ++b.stops > backstep_most_traps_)
        throw NoSuchPosition("counting stopped: the instructions that may come just before ran more than " +
                             std::to_string(backstep_most_traps_) + " times");
    size_t i = tag - kTagCandidate;
    uint64_t c = b.candidates[i];
    // The execution the thread rests on at the base is the base itself.
    bool resting;
    if (b.filtered) {
        // Stops skip executions: the counter has them all, the one the
        // thread rests on included.
        uint64_t ran = b.traps[i].count();
        resting = b.resting == c && ran == 1;
        b.executions[i] = ran - (b.resting == c ? 1 : 0);
        uint64_t all = 0;
        for (const auto& trap : b.traps)
            all += trap.count();
        if (all > kBackstepMostFiltered)
            throw NoSuchPosition("counting stopped: the instructions that may come just before ran more than " +
                                 std::to_string(kBackstepMostFiltered) + " times");
    } else {
        resting = b.resting == c && b.executions[i] == 0 && !b.resting_seen;
        if (b.resting == c)
            b.resting_seen = true;
        if (!resting)
            b.executions[i]++;
    }
    const Registers& regs = task.regs();
    TraceeMemory mem = task.memory();
    MemoryReader read = [&](uint64_t addr, std::span<uint8_t> out) { return mem.read(RemoteAddr(addr), out); };
    uint8_t code[16] = {};
    size_t n = mem.read_partial(RemoteAddr(c), code);
    bool leads_there = false;
    if (arrivals + 1 == b.arrival.count) {
        if (b.arrival.kind == perfclock::Segment::Kind::Break) {
            auto next = decoder_.successor(c, {code, n}, regs, read);
            leads_there = next && *next == b.arrival.addr;
        } else {
            for (const auto& w : decoder_.writes(c, {code, n}, regs))
                leads_there =
                    leads_there || (w.addr < b.arrival.addr + b.arrival.len && b.arrival.addr < w.addr + w.len);
        }
    }
    if (!leads_there)
        return Then::Resume;
    // Here, before it runs: remember this point, then confirm with one step.
    b.chosen = resting ? b.base : b.base.with(perfclock::Segment::brk(c, b.executions[i]));
    position_ = b.chosen;
    snapshot_here(Timeline::Kind::Stop);
    b.verifying = true;
    return Then::Step;
}

} // namespace rw::replay
