// Where a held signal is delivered when its thread makes no syscall.
//
// The supervisor holds a signal that comes in user code until the thread's
// next syscall (on_signal); a thread that computes for longer is
// interrupted and gets it in user code (SignalKind::AtPosition). Replay
// finds that point again as the first execution of its instruction with
// the recorded registers. In a loop whose rounds differ only in memory
// (`while (!stop) { x = f(0); rounds++; }`, interrupted inside f) that is
// the first round, not the recorded one: the signal would end the loop
// early in replay. And replay pays a trap for every execution of that
// instruction since the thread's last event: millions, in an inner loop.
//
// So the interrupted thread (at rip A, registers R) is single-stepped
// through one round, until A comes again with R after kColdRound steps at
// least (an inner loop's rounds can look alike: A in a function a loop
// calls eight times a round with the same registers), counting how often each
// instruction runs, while the pages it writes are watched (written_pages.h).
// A comes again with other registers after kColdRound steps or more: its
// loop counts in registers, and A is rare enough to stop at; the round
// ends there.
// The round's least executed instruction B (the outer loop's, where A is
// in an inner one) gets a hardware breakpoint, and the signal is delivered
// at B's next execution. The trace keeps the pages written since the
// interrupt and a digest of their content there: replay stops at the
// first execution of B with the recorded registers where those pages hold
// that content, paying one trap per round. A round longer than
// kMaxRoundSteps ends the stepping early: B is then the least executed
// instruction of the part stepped. The stepping may reach a syscall
// instead, which delivers the signal as usual.
//
// A thread that blocks SIGTRAP, a machine without debug registers, and
// probes past their share of the recording's time keep the plain
// position; so does a thread that does not come to B within kProbeGiveUp.
#include <sys/ptrace.h>

#include <system_error>
#include <unordered_map>

#include "page_digest.h"
#include "process_image.h"
#include "supervisor.h"
#include "tracee.h"

namespace rw {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kSignalProbeTag = 0x7277'0000'0000'0020;
// About 1 s of single steps where a trap costs 60 us, 60 ms on hardware
// where it costs 3.
constexpr int kMaxRoundSteps = 20000;
// A replay stop per this many instructions costs about what the stepping
// of a round would.
constexpr int kColdRound = 1000;
constexpr auto kProbeGiveUp = std::chrono::milliseconds(200);
constexpr size_t kMaxSignalProbePages = 4096;
// Probes take at most this share of the recording's time (a program that
// takes a profiling signal 100 times a second in a loop would otherwise
// record at a fraction of its speed), plus a start.
constexpr int kProbeSharePercent = 10;
constexpr auto kProbeAllowance = std::chrono::milliseconds(1500);

// The instruction of the stepped stretch that ran least often; the first
// such one when several did. Not one in the uprobes page (a --parallel
// return probe's trampoline), which replay has not.
std::optional<uint64_t> least_executed(Tid tgid, const std::unordered_map<uint64_t, uint32_t>& counts,
                                       const std::vector<uint64_t>& order)
{
    auto mappings = read_mappings(tgid);
    std::optional<uint64_t> best;
    for (uint64_t rip : order)
        if ((!best || counts.at(rip) < counts.at(*best)) && !in_uprobes_page(mappings, rip))
            best = rip;
    return best;
}

} // namespace

Supervisor::SignalProbeStart Supervisor::start_signal_probe(Thread& t, const Registers& regs)
{
    auto start = Clock::now();
    if (t.signal_probe_tried || !perfclock::breakpoints_work() || blocks_sigtrap(t.tid) ||
        signal_probe_time_ > (start - started_) * kProbeSharePercent / 100 + kProbeAllowance)
        return SignalProbeStart::Plain;
    t.signal_probe_tried = true;
    t.signal_written.emplace(t.tgid);
    std::unordered_map<uint64_t, uint32_t> counts;
    std::vector<uint64_t> order{regs[Registers::RIP]};
    counts[regs[Registers::RIP]] = 1;
    int steps = 0, last_at_a = 0;
    // Signals that come meanwhile (the timer's next tick) are held too.
    StepProbe round = step_until(t, kMaxRoundSteps, true, [&](const Registers& now) {
        uint64_t rip = now[Registers::RIP];
        steps++;
        if (rip == regs[Registers::RIP]) {
            // The round ends at A with R, but not before kColdRound steps:
            // A in an inner loop whose rounds look alike (the same
            // registers each time) has the outer loop's instructions,
            // executed less often, in a longer stretch.
            if ((same_registers(now, regs) && steps >= kColdRound) || steps - last_at_a >= kColdRound)
                return true;
            last_at_a = steps;
        }
        if (counts[rip]++ == 0)
            order.push_back(rip);
        return false;
    });
    signal_probe_time_ += Clock::now() - start;
    if (round == StepProbe::HandedOver) {
        // Something of the program's stopped it (handled); the signal waits on.
        t.signal_written.reset();
        return SignalProbeStart::HandedOver;
    }
    if (is_syscall_instruction(t.tid, get_registers(t.tid)[Registers::RIP])) {
        // It gets the signal at that syscall.
        t.signal_written.reset();
        return SignalProbeStart::Resume;
    }
    auto b = least_executed(t.tgid, counts, order);
    try {
        if (b) {
            t.signal_probe = std::make_unique<perfclock::BreakpointCounter>(t.tid, perfclock::BreakpointKind::Execute,
                                                                            *b, 8, 1, kSignalProbeTag);
            t.signal_probe_start = Clock::now();
            return SignalProbeStart::Resume;
        }
    } catch (const std::system_error&) {
    }
    // No instruction to stop at: the signal comes where the stepping left
    // the thread (not where it was interrupted).
    t.signal_written.reset();
    deliver_at_position(t, get_registers(t.tid), {});
    return SignalProbeStart::Resume;
}

void Supervisor::end_signal_probe(Thread& t)
{
    if (t.signal_probe)
        signal_probe_time_ += Clock::now() - t.signal_probe_start;
    t.signal_probe.reset();
    t.signal_written.reset();
}

bool Supervisor::signal_probe_running(Thread& t, Clock::time_point now)
{
    if (!t.signal_probe)
        return false;
    if (now < t.signal_probe_start + kProbeGiveUp)
        return true;
    // It left the loop: interrupted again, it takes the signal where it
    // then stands.
    end_signal_probe(t);
    t.deadline = now;
    return false;
}

bool Supervisor::on_signal_probe_trap(Thread& t)
{
    siginfo_t si = get_siginfo(t.tid);
    if (si.si_code != kTrapPerf || perf_data(si) != kSignalProbeTag)
        return false;
    if (t.signal_probe && !t.deferred.empty()) {
        auto pages = t.signal_written->since(kMaxSignalProbePages);
        end_signal_probe(t);
        if (!pages)
            problem("cannot tell which pages thread " + std::to_string(t.tid) +
                        " wrote; the point where a signal is delivered to it is checked by its registers only",
                    t.tid);
        deliver_at_position(t, get_registers(t.tid), pages.value_or(std::vector<uint64_t>{}));
    }
    // (Else queued before its probe ended: not the program's.)
    resume(t, 0);
    return true;
}

void Supervisor::deliver_at_position(Thread& t, const Registers& regs, std::vector<uint64_t> pages)
{
    t.at_position = true;
    t.position = regs;
    t.position_pages = std::move(pages);
    add_stack_frame_pages(regs[Registers::RSP], regs[Registers::RBP], t.position_pages);
    resend_deferred(t);
}

} // namespace rw
