// The supervisor's side of thread scheduling: syscall stops of serialized
// processes, handing the CPU from thread to thread, and preemption.
//
// Preempting a thread in user code needs a point replay can find again
// without a branch counter. The thread is interrupted wherever it is (rip A),
// then run on to the next execution of A under a hardware breakpoint,
// watching which pages change (written_pages.h). That second stop is the
// preemption point: replay looks for the first execution of A with the same
// registers at which the pages written during that round hold the same
// bytes. A spin-wait writes nothing and keeps its registers, so any round is
// the same state; a loop that counts in registers has one matching round; a
// loop that counts in memory is told apart by the page content.
//
// Replay pays one breakpoint hit per execution of that instruction since the
// thread last stopped, so only a thread that is waiting (same registers, no
// writes from one round to the next: a spin-wait) is preempted at once. One
// that makes progress keeps the CPU until it makes a syscall, or until it
// has run for kComputeBudget while others wait (a spin-wait that counts its
// rounds), which can make that point slow to replay.
//
// Where the debug registers do not work (some hypervisors), the round is
// single-stepped instead: at most kMaxProbeSteps instructions, ending at a
// syscall instruction. A spin-wait's round is a few instructions.
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include "bpf_capture.h"
#include "event_assembler.h"
#include "page_digest.h"
#include "supervisor.h"
#include "syscall_table.h"
#include "tracee.h"
#include "written_pages.h"

namespace rw {
namespace {

using Clock = std::chrono::steady_clock;

// How long the probe waits for the interrupted instruction to run again
// before it tries another one (straight-line code that is not a loop).
constexpr auto kProbeWait = std::chrono::milliseconds(20);
// More pages than this written in one round: keep the first ones.
constexpr size_t kMaxProbePages = 4096;
constexpr auto kComputeBudget = std::chrono::seconds(2);
constexpr uint64_t kProbeTag = 0x7277'0000'0000'0010;
constexpr int kMaxProbeSteps = 2000;

} // namespace

void Supervisor::serialize(Tid key, Tid runner)
{
    // rewind record --parallel: the threads run on all CPUs; the kernel
    // side's synchronization probes give their lock operations an order.
    if (options_.parallel)
        return;
    scheduler_.serialize(key, runner, Clock::now());
    mark_serialized(key);
}

void Supervisor::unserialize(Tid key)
{
    if (!scheduler_.serialized(key))
        return;
    scheduler_.forget(key);
    for (Tid tgid : groups_.members(key))
        if (tgid > 0)
            capture_.set_serialized(tgid, false);
}

void Supervisor::drain_ring()
{
    capture_.drain();
    take_yields();
    take_exits();
}

void Supervisor::take_exits()
{
    // A thread that has exited runs no more user code: its turn passes on
    // now. (The main thread's SYS_exit while others run leaves it a zombie
    // that waitpid reports only when the whole process is gone: the others
    // would wait for the CPU until then, that is, forever.)
    for (auto [tid, tgid] : assembler_.take_exits()) {
        Tid k = groups_.key_of(tgid);
        if (scheduler_.serialized(k))
            run_next(k, scheduler_.gone(k, tid, Clock::now()));
    }
}

void Supervisor::take_yields()
{
    // The kernel side reported the entry of a call that may block: the
    // thread's place in the stream is reserved there (EventAssembler), and
    // it is stopped when the call returns (RW_STALL_TURN). Another thread
    // runs meanwhile.
    for (auto [tid, nr] : assembler_.take_yields()) {
        auto it = threads_.find(tid);
        if (it == threads_.end() || !serialized(it->second))
            continue;
        Thread& t = it->second;
        yields_++;
        t.out_of_turn = true;
        t.probe.reset(); // it reached a syscall: no preemption needed
        t.written.reset();
        // sched_yield puts the thread behind every other runnable thread
        // of its process, also one that is on its way back from a call
        // and has not asked for the CPU yet.
        give_up_cpu(t, nr == SYS_sched_yield);
    }
}

bool Supervisor::park_stop(Thread& t, int status)
{
    if (!serialized(t)) {
        t.out_of_turn = false;
        return false;
    }
    // The stop that ends its call (a stall) is the kernel side's: handled
    // now, its resumption waits (resume). Any other (a signal to record, a
    // group stop) is handled when the thread has the CPU.
    StopInfo s = decode_wait_status(status);
    if (s.kind == StopInfo::Kind::SignalDelivery && s.signal == RW_STALL_SIGNAL && capture_.has_stall(t.tid))
        return false;
    if (scheduler_.want(key(t), t.tid, Clock::now())) {
        t.out_of_turn = false;
        return false;
    }
    t.parked_status = status;
    return true;
}

bool Supervisor::grant(Thread& t)
{
    if (detaching_)
        return true; // (it stays stopped, for the detach)
    t.out_of_turn = false;
    // A thread its creator's tracer traces from its birth waits for it
    // there (its creator's clone stop can come after its own first stop).
    if (!t.parked_status && birth_stop_for_tracer(t))
        return true;
    if (t.parked_status) {
        int status = *t.parked_status;
        t.parked_status.reset();
        on_stop(t.tid, status);
        return true;
    }
    int signo = std::exchange(t.parked_signal, 0);
    return resume(t, signo);
}

void Supervisor::on_new_thread_stop(Thread& t)
{
    // The new thread's first stop can come before its creator's clone
    // stop: the creator is the process's other thread, which runs.
    if (!serialized(t)) {
        for (const auto& [tid, other] : threads_)
            if (other.tgid == t.tgid && tid != t.tid) {
                serialize(key(t), tid);
                break;
            }
    }
    want_cpu(t);
}

void Supervisor::want_cpu(Thread& t)
{
    if (scheduler_.want(key(t), t.tid, Clock::now()) && !grant(t))
        on_thread_gone(t.tid, t.tgid);
}

void Supervisor::give_up_cpu(Thread& t, bool steps_aside)
{
    run_next(key(t), scheduler_.yield(key(t), t.tid, Clock::now(), steps_aside));
}

void Supervisor::hand_over(Thread& t)
{
    Tid tid = t.tid;
    give_up_cpu(t);
    auto it = threads_.find(tid);
    if (it != threads_.end())
        want_cpu(it->second);
}

void Supervisor::run_next(Tid key, std::optional<Tid> next)
{
    // A thread that died while it waited passes its turn on.
    while (next) {
        auto it = threads_.find(*next);
        if (it != threads_.end() && grant(it->second))
            return;
        next = scheduler_.gone(key, *next, Clock::now());
    }
}

void Supervisor::let_fault_kill(Thread& t)
{
    // Untraced, the faulting instruction runs again and the kernel kills
    // the init (and its namespace), as it would have without rewind. The
    // kernel side records its exit; its wait status goes to its parent, so
    // the recorder hears of it only if it is that parent (the first process).
    Tid tid = t.tid, tgid = t.tgid;
    if (ptrace(PTRACE_DETACH, tid, nullptr, nullptr) != 0) {
        problem("thread " + std::to_string(tid) +
                    ": cannot let the fault of a namespace init kill it: " + std::strerror(errno),
                tid);
        ::kill(tid, SIGKILL);
        return;
    }
    if (tid == initial_)
        return;
    threads_.erase(tid);
    on_thread_gone(tid, tgid);
}

void Supervisor::on_thread_gone(Tid tid, Tid tgid)
{
    Tid k = groups_.key_of(tgid);
    run_next(k, scheduler_.gone(k, tid, Clock::now()));
    release_children_of(tid);
    auto under = [&](auto pred) {
        return std::any_of(threads_.begin(), threads_.end(), [&](const auto& kv) { return pred(kv.second); });
    };
    if (under([&](const Thread& th) { return th.tgid == tgid; }))
        return;
    // The process is gone: out of its group, and its schedule ends with
    // its group's last thread.
    capture_.release_sync_probes(tgid);
    if (groups_.leave(tgid))
        capture_.set_serialized(tgid, false);
    if (!under([&](const Thread& th) { return key(th) == k; }))
        unserialize(k);
    else if (k == tgid)
        unserialize(tgid);
}

void Supervisor::check_slices()
{
    auto now = Clock::now();
    for (auto [k, tid] : scheduler_.overdue_turns(now))
        run_next(k, tid);
    for (Tid tid : scheduler_.overdue(now)) {
        auto it = threads_.find(tid);
        if (it == threads_.end())
            continue;
        Thread& t = it->second;
        if (t.out_of_turn || t.preempt_requested || t.interrupt_requested)
            continue;
        if (t.probe) {
            if (now < t.probe_deadline)
                continue;
            t.probe.reset(); // the instruction did not come round again: try another
        }
        if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0)
            t.preempt_requested = true;
    }
}

void Supervisor::start_preemption(Thread& t)
{
    Registers regs = get_registers(t.tid);
    if (static_cast<int64_t>(regs[Registers::ORIG_RAX]) >= 0) {
        // Stopped on its way out of a syscall (one that does not block, or
        // one the interrupt cut short, which the kernel restarts): its event
        // is a point replay reaches without help. The CPU changes hands here.
        capture_.drain();
        syscall_handovers_++;
        hand_over(t);
        return;
    }
    t.probe_from = regs;
    if (blocks_sigtrap(t.tid)) {
        // No breakpoint can tell us where it is. It runs on towards a
        // syscall; past the compute budget one round of single steps
        // (every budget) tells a spin-wait, preempted there, from work,
        // which is left to reach its syscall: a point in the middle of
        // computation would cost replay a breakpoint hit per execution of
        // its instruction, hundreds of millions in xz's workers.
        if (Clock::now() - scheduler_.running_since(key(t)) < kComputeBudget) {
            scheduler_.extend(key(t), 4 * options_.time_slice);
            resume(t, 0);
            return;
        }
        probe_by_stepping(t, false);
        return;
    }
    if (!perfclock::breakpoints_work()) {
        probe_by_stepping(t, true);
        return;
    }
    // Which pages a round writes costs a pass over the process's memory
    // where soft-dirty bits do not work (written_pages.h): a thread still
    // within its compute budget is first looked at by its registers alone,
    // and only one that keeps them gets a second round with its pages.
    if (Clock::now() - scheduler_.running_since(key(t)) >= kComputeBudget)
        t.written.emplace(t.tgid);
    else
        t.written.reset();
    watch_round(t);
}

void Supervisor::watch_round(Thread& t)
{
    try {
        // The thread stands before A: the first hit is A right away, the
        // second is the next round.
        t.probe = std::make_unique<perfclock::BreakpointCounter>(t.tid, perfclock::BreakpointKind::Execute,
                                                                 t.probe_from[Registers::RIP], 8, 2, kProbeTag);
    } catch (const std::system_error& e) {
        problem("thread " + std::to_string(t.tid) + " cannot be preempted (no hardware breakpoint: " + e.what() +
                    "); it runs on",
                t.tid);
        t.written.reset();
        scheduler_.extend(key(t), std::chrono::hours(1));
        resume(t, 0);
        return;
    }
    t.probe_deadline = Clock::now() + kProbeWait;
    resume(t, 0);
}

Supervisor::StepProbe Supervisor::step_until(Thread& t, int max_steps, bool hold_signals,
                                             const std::function<bool(const Registers&)>& arrived)
{
    // Each step's forced SIGTRAP unblocks SIGTRAP: the program's mask is
    // put back after every step.
    auto mask = get_sigmask(t.tid);
    bool reblock = mask && (*mask & signal_bit(SIGTRAP)) != 0;
    for (int i = 0; i < max_steps; i++) {
        if (is_syscall_instruction(t.tid, get_registers(t.tid)[Registers::RIP]))
            return StepProbe::NoRound;
        if (::ptrace(PTRACE_SINGLESTEP, t.tid, nullptr, nullptr) != 0)
            return StepProbe::NoRound;
        int status = 0;
        pid_t got;
        while ((got = waitpid(t.tid, &status, __WALL)) < 0 && errno == EINTR) {
        }
        bool stepped = got == t.tid && WIFSTOPPED(status) && WSTOPSIG(status) == SIGTRAP && (status >> 16) == 0 &&
                       get_siginfo(t.tid).si_code == kTrapTrace;
        if (stepped && reblock)
            set_sigmask(t.tid, *mask);
        if (!stepped && hold_signals && got == t.tid && hold_while_stepping(t, status))
            continue;
        if (!stepped) {
            // Something of the program's (a signal, its exit): its usual path.
            if (got == t.tid)
                on_stop(t.tid, status);
            return StepProbe::HandedOver;
        }
        if (arrived(get_registers(t.tid)))
            return StepProbe::Round;
    }
    return StepProbe::NoRound;
}

void Supervisor::probe_by_stepping(Thread& t, bool budget_preempts)
{
    t.written.emplace(t.tgid);
    uint64_t rip = t.probe_from[Registers::RIP];
    StepProbe probe =
        step_until(t, kMaxProbeSteps, false, [&](const Registers& r) { return r[Registers::RIP] == rip; });
    if (probe == StepProbe::HandedOver)
        return;
    auto written = t.written->since(kMaxProbePages);
    bool waiting =
        probe == StepProbe::Round && same_registers(get_registers(t.tid), t.probe_from) && written && written->empty();
    if (waiting || (budget_preempts && Clock::now() - scheduler_.running_since(key(t)) >= kComputeBudget)) {
        preempt_here(t, std::move(written));
        return;
    }
    scheduler_.extend(key(t), budget_preempts ? 4 * options_.time_slice
                                              : std::chrono::duration_cast<std::chrono::milliseconds>(kComputeBudget));
    resume(t, 0);
}

bool Supervisor::on_probe_trap(Thread& t)
{
    siginfo_t si = get_siginfo(t.tid);
    if (si.si_code != kTrapPerf || perf_data(si) != kProbeTag)
        return false;
    if (!t.probe) {
        // Queued before its probe was given up (the thread made a syscall,
        // or the probe timed out): not the program's.
        resume(t, 0);
        return true;
    }
    t.probe.reset();
    bool same = same_registers(get_registers(t.tid), t.probe_from);
    if (!t.written) {
        if (same) {
            t.written.emplace(t.tgid); // the round from here tells a spin-wait
            watch_round(t);
        } else {
            scheduler_.extend(key(t), 4 * options_.time_slice); // making progress
            resume(t, 0);
        }
        return true;
    }
    auto written = t.written->since(kMaxProbePages);
    bool waiting = same && written && written->empty();
    if (!waiting && Clock::now() - scheduler_.running_since(key(t)) < kComputeBudget) {
        // Making progress: let it run on towards a syscall; look again later.
        scheduler_.extend(key(t), 4 * options_.time_slice);
        resume(t, 0);
        return true;
    }
    preempt_here(t, std::move(written));
    return true;
}

void Supervisor::preempt_here(Thread& t, std::optional<std::vector<uint64_t>> pages)
{
    record_preemption(t, std::move(pages));
    // The trap is ours: the thread waits, stopped here, for its next turn.
    hand_over(t);
}

void Supervisor::record_preemption(Thread& t, std::optional<std::vector<uint64_t>> pages)
{
    capture_.drain();
    t.written.reset();
    PreemptEvent e;
    e.tid = t.tid;
    e.regs = get_registers(t.tid);
    if (!pages) {
        problem("cannot tell which pages process " + std::to_string(t.tgid) +
                    " wrote; a preemption point cannot be checked",
                t.tid);
        pages.emplace();
    }
    e.pages = std::move(*pages);
    add_stack_frame_pages(e.regs[Registers::RSP], e.regs[Registers::RBP], e.pages);
    e.pages_hash = page_digest(t.tid, e.pages);
    e.seq = capture_.next_seq();
    emit(std::move(e));
}

} // namespace rw
