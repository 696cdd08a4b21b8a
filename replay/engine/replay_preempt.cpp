// Replaying the recorder's preemptions: the thread runs to the first
// execution of the recorded instruction with the recorded registers where the
// pages it was writing hold the recorded bytes (see supervisor_threads.cpp).
#include <csignal>
#include <optional>
#include <utility>

#include "hw_breakpoint.h"
#include "instruction_trap.h"
#include "page_digest.h"
#include "replayer.h"
#include "steady_now.h"
#include "text.h"
#include "trap_tags.h"

namespace rw::replay {
void Replayer::on_preempt(const PreemptEvent& e)
{
    Task& t = task(e.tid);
    collect_fresh(t);
    uint64_t rip = e.regs[Registers::RIP];
    // Each execution of the instruction stops the thread: a debug register
    // where they work, else the engine's own int3 (stepped over each time).
    std::optional<perfclock::BreakpointCounter> bp;
    std::optional<perfclock::InstructionTrap> trap;
    std::optional<perfclock::EngineInt3> trap_named;
    if (perfclock::breakpoints_work()) {
        bp.emplace(t.tid(), perfclock::BreakpointKind::Execute, rip, 8, 1, kTagEngine);
    } else {
        try {
            trap.emplace(t.tid(), rip);
        } catch (const std::exception& x) {
            diverge(t, "cannot find the point where the recording switched threads: " + std::string(x.what()));
        }
        trap_named.emplace(engine_int3_, rip);
    }
    // A thread that rests at this very instruction (its last preemption
    // was there) runs it first. That execution is not the point: the
    // recorder's next preemption point was one round of the loop at least
    // after the thread ran again (a spin loop on one flag, for turns one
    // after another, is in the same registers at each).
    preempt_search_ = PreemptSearch{t.tid(), &e};
    preempt_search_->from_rest = t.regs()[Registers::RIP] == rip;
    struct Done {
        std::optional<PreemptSearch>& search;
        ~Done() { search.reset(); }
    } done{preempt_search_};
    // Every execution is a stop, so the watchdog alone would never fire:
    // the whole search gets the watchdog's time.
    auto give_up = steady_now() + options_.watchdog;
    auto missed = [&](const std::string& instead) {
        const PreemptSearch& p = *preempt_search_;
        diverge(t, "thread " + std::to_string(e.tid) + " never reached the point where the recording switched threads",
                "  expected rip " + hex(rip) + " (" + std::to_string(p.hits) + " executions, " +
                    std::to_string(p.with_registers) + " with the recorded registers, none also with the recorded " +
                    std::to_string(e.pages.size()) + " pages)\n  instead: " + instead);
    };
    for (;;) {
        resume(t, Resume::Emulate);
        restartable_ = preempt_search_->hits == 0;
        StopInfo s = wait_stop(t, "the point where the recording switched threads (rip " + hex(rip) + ", " +
                                      std::to_string(preempt_search_->hits) + " executions so far)");
        restartable_ = false;
        if (preempt_search_->found || faults_at_point(t, s, e))
            break;
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP || t.regs()[Registers::RIP] != rip)
            missed(describe_stop(t, s));
        if (steady_now() > give_up)
            missed("still searching after " + std::to_string(options_.watchdog.count()) + " s");
        if (trap) {
            // Not this execution: run the instruction, then trap it again.
            step_over_engine_int3(t, *trap);
        }
    }
    // The thread rests here until its next event; nothing skips the
    // instruction's next execution.
    Registers r = t.regs();
    r[Registers::EFLAGS] &= ~kResumeFlag;
    t.set_regs(r);
    if (hook_)
        hook_->on_event_point(t);
}

bool Replayer::faults_at_point(Task& t, const StopInfo& stop, const PreemptEvent& e)
{
    // The recorder stopped the thread at a fault or a trap (for a recorded
    // tracer to see): the registers of that stop are the point. A fault
    // stops before its instruction, which the instruction breakpoint does
    // not see when the thread comes back there from a handler of the same
    // fault (the kernel returns with the resume flag set); a trap (int3, a
    // single step) stops after its instruction, where the thread rests.
    // The signal is not delivered: a faulting instruction faults again when
    // the thread goes on.
    if (stop.kind != StopInfo::Kind::SignalDelivery ||
        (stop.signal != SIGSEGV && stop.signal != SIGBUS && stop.signal != SIGILL && stop.signal != SIGFPE &&
         stop.signal != SIGTRAP))
        return false;
    return same_registers(t.regs(), e.regs) && page_digest(t.tid(), e.pages) == e.pages_hash;
}

bool Replayer::preempt_point_trap(Task& t, const StopInfo& stop)
{
    // The engine's breakpoint and a debugger's counter on the same
    // instruction trap together, and the kernel delivers one SIGTRAP: so
    // every trap there is a round of the search, whoever's it is.
    if (!preempt_search_ || t.tid() != preempt_search_->tid || stop.kind != StopInfo::Kind::SignalDelivery ||
        stop.signal != SIGTRAP)
        return false;
    const PreemptEvent& e = *preempt_search_->event;
    if (t.regs()[Registers::RIP] != e.regs[Registers::RIP])
        return false;
    preempt_search_->hits++;
    if (std::exchange(preempt_search_->from_rest, false))
        return true;
    if (same_registers(t.regs(), e.regs)) {
        preempt_search_->with_registers++;
        if (page_digest(t.tid(), e.pages) == e.pages_hash)
            preempt_search_->found = true;
    }
    return true;
}

} // namespace rw::replay
