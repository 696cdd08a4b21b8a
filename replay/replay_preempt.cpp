// Replaying the recorder's preemptions: the thread runs to the first
// execution of the recorded instruction with the recorded registers where the
// pages it was writing hold the recorded bytes (see supervisor_threads.cpp).
#include <csignal>

#include "hw_breakpoint.h"
#include "page_digest.h"
#include "replayer.h"
#include "text.h"
#include "trap_tags.h"

namespace rw::replay {
void Replayer::on_preempt(const PreemptEvent& e)
{
    Task& t = task(e.tid);
    collect_fresh(t);
    uint64_t rip = e.regs[Registers::RIP];
    perfclock::BreakpointCounter bp(t.tid(), perfclock::BreakpointKind::Execute, rip, 8, 1, kTagEngine);
    uint64_t hits = 0, with_registers = 0;
    // Every execution is a stop, so the watchdog alone would never fire:
    // the whole search gets the watchdog's time.
    auto give_up = std::chrono::steady_clock::now() + options_.watchdog;
    auto missed = [&](const std::string& instead) {
        diverge(t, "thread " + std::to_string(e.tid) + " never reached the point where the recording switched threads",
                "  expected rip " + hex(rip) + " (" + std::to_string(hits) + " executions, " +
                    std::to_string(with_registers) + " with the recorded registers, none also with the recorded " +
                    std::to_string(e.pages.size()) + " pages)\n  instead: " + instead);
    };
    for (;;) {
        resume(t, Resume::Emulate);
        restartable_ = hits == 0;
        StopInfo s = wait_stop(t, "the point where the recording switched threads (rip " + hex(rip) + ", " +
                                      std::to_string(hits) + " executions so far)");
        restartable_ = false;
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP ||
            get_siginfo(t.tid()).si_code != kTrapPerf)
            missed(describe_stop(t, s));
        hits++;
        if (std::chrono::steady_clock::now() > give_up)
            missed("still searching after " + std::to_string(options_.watchdog.count()) + " s");
        if (!same_registers(t.regs(), e.regs))
            continue;
        with_registers++;
        if (page_digest(t.tid(), e.pages) != e.pages_hash)
            continue;
        // The thread rests here until its next event; nothing skips the
        // instruction's next execution.
        Registers r = t.regs();
        r[Registers::EFLAGS] &= ~kResumeFlag;
        t.set_regs(r);
        return;
    }
}

} // namespace rw::replay
