// Replaying signals and rdtsc traps.
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "text.h"
#include "hw_breakpoint.h"
#include "instruction_trap.h"
#include "page_digest.h"
#include "random_insn.h"
#include "steady_now.h"
#include "syscall_restart.h"
#include "syscall_sigmask.h"
#include "remote_syscall.h"
#include "breakpoint_filters.h"
#include "replayer.h"
#include "trap_tags.h"
#include "tsc.h"

namespace rw::replay {

namespace {

// si_code of a seccomp filter's SIGSYS (SYS_SECCOMP, asm-generic/siginfo.h).
constexpr int kSysSeccomp = 1;

} // namespace
void Replayer::check_registers(Task& t, const Registers& expected, const std::string& what)
{
    const Registers& actual = t.regs();
    if (same_registers(actual, expected))
        return;
    std::string details;
    for (size_t i = 0; i < Registers::kCount; i++) {
        uint64_t x = expected.words[i], y = actual.words[i];
        if (i == Registers::EFLAGS && ((x ^ y) & ~kResumeFlag) == 0)
            continue;
        if (x != y)
            details += "  " + std::string(register_name(i)) + ": expected " + hex(x) + ", got " + hex(y) + "\n";
    }
    if (!details.empty())
        details.pop_back();
    diverge(t, "registers differ " + what, details);
}

void Replayer::adopt_scratch_registers(Task& t, const Registers& recorded)
{
    // In a parallel trace a synchronization call's futexes run for real and
    // depend on contention, which replay does not reproduce: a call that
    // waited in the recording (futex's sixth argument in r9) may not wait
    // in replay. What it leaves in the registers a call may clobber, and
    // the syscall did not take as arguments (checked at its entry), is not
    // the program's. The signal frame gets the recorded values.
    static constexpr Registers::Index kScratch[] = {Registers::RDI, Registers::RSI, Registers::RDX, Registers::R8,
                                                    Registers::R9,  Registers::R10, Registers::R11, Registers::EFLAGS};
    Registers r = t.regs();
    for (Registers::Index i : kScratch)
        r[i] = recorded[i];
    t.set_regs(r);
}

void Replayer::on_signal(const SignalEvent& e)
{
    Task& t = task(e.tid);
    collect_fresh(t);
    switch (e.kind) {
    case SignalKind::Fault: {
        // The instruction that faulted in the recording faults again.
        resume(t, Resume::Emulate);
        StopInfo s = wait_stop(t, signal_name(e.signo) + " (a fault)");
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != e.signo)
            diverge(t, "expected the fault " + signal_name(e.signo) + " at rip " + hex(e.regs[Registers::RIP]) +
                           ", got " + describe_stop(t, s));
        check_registers(t, e.regs, "at " + signal_name(e.signo));
        if (hook_)
            hook_->on_signal(t, e);
        t.inject_signal = e.signo;
        return;
    }
    case SignalKind::AtSyscall:
        if (t.last_syscall_seq != e.anchor_seq)
            diverge(t, signal_name(e.signo) + " was delivered after another syscall in the recording");
        pass_to_restart(t, e);
        deliver_signal(t, e);
        return;
    case SignalKind::AtPosition:
        reach_position(t, e);
        deliver_signal(t, e);
        return;
    }
}

void Replayer::pass_to_restart(Task& t, const SignalEvent& e)
{
    // A signal the kernel took after the one just delivered had no handler
    // and the interrupted call was set up to run again (rip back on the
    // syscall instruction, rax its number): it came after that, before the
    // call ran again (SIGCHLD of a child that ended meanwhile). The thread
    // goes on with the one before, to its entry of the call made again,
    // and is put back before the instruction, where the signal finds it.
    if (t.at != Task::At::SignalStop)
        return;
    Registers now = t.regs();
    const Registers& then = e.regs;
    if (!restarts(static_cast<int64_t>(now[Registers::RAX])) || then[Registers::RIP] + 2 != now[Registers::RIP] ||
        then[Registers::RAX] != now[Registers::ORIG_RAX])
        return;
    resume(t, Resume::Emulate);
    StopInfo s = wait_stop(t, "the call " + signal_name(e.signo) + " interrupted, made again");
    if (s.kind != StopInfo::Kind::SyscallStop || t.regs()[Registers::ORIG_RAX] != now[Registers::ORIG_RAX])
        diverge(t, "expected " + syscall_name(static_cast<int>(now[Registers::ORIG_RAX])) +
                       " to be made again before " + signal_name(e.signo) + ", got " + describe_stop(t, s));
    Registers back = t.regs();
    back[Registers::RIP] = then[Registers::RIP];
    back[Registers::RAX] = then[Registers::RAX];
    t.set_regs(back);
    t.emulated_entry = true; // resumed with PTRACE_SYSEMU, it does not run
}

void Replayer::deliver_signal(Task& t, const SignalEvent& e)
{
    // An interrupted wait with a mask of its own (make's pselect6 unblocks
    // SIGCHLD only there): the signal comes under that mask, as it did.
    // Judged from the registers the recording had at the delivery: after a
    // signal without a handler the kernel puts the thread's own mask back
    // and sets the call up to run again (rip on the syscall instruction, rax
    // its number), and a signal delivered then comes under the own mask.
    std::optional<uint64_t> wait_mask;
    uint64_t own_mask = 0;
    if (e.kind == SignalKind::AtSyscall)
        wait_mask = mask_of_interrupted_wait(e.regs, t.memory());
    if (wait_mask) {
        own_mask = thread_sigmask(t.tid());
        set_thread_sigmask(t.tid(), *wait_mask);
        t.mask_changed();
    }
    siginfo_t recorded_info;
    std::memcpy(&recorded_info, e.siginfo.data(), sizeof(recorded_info));
    if (e.signo == SIGSYS && recorded_info.si_code == kSysSeccomp)
        force_default_action(t, SIGSYS, false); // replay installs none of the program's filters
    if (syscall(SYS_tgkill, t.group().tgid, t.tid(), e.signo) != 0)
        diverge(t, "cannot send " + signal_name(e.signo) + ": " + strerror(errno));
    resume(t, Resume::Emulate);
    StopInfo s = wait_stop(t, "the delivery of " + signal_name(e.signo));
    // Sent to a thread attached with PTRACE_SEIZE, SIGCONT first stops it
    // with a notification (PTRACE_EVENT_STOP), then comes to be delivered.
    // A stop signal delivered just before (handed over at this resume)
    // stops the group first: in the recording a SIGCONT ended that stop and
    // was itself discarded by the next stop signal, so the thread's next
    // delivery is this signal.
    for (int notices = 0;
         s.kind == StopInfo::Kind::GroupStop && (e.signo == SIGCONT || is_stop_signal(s.signal)) && notices < 4;
         notices++) {
        resume(t, Resume::Emulate);
        s = wait_stop(t, "the delivery of " + signal_name(e.signo));
    }
    if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != e.signo)
        diverge(t, "expected the delivery of " + signal_name(e.signo) + ", got " + describe_stop(t, s));
    if (e.kind == SignalKind::AtSyscall && parallel_)
        adopt_scratch_registers(t, e.regs);
    check_registers(t, e.regs, "where " + signal_name(e.signo) + " is delivered");
    siginfo_t info;
    std::memcpy(&info, e.siginfo.data(), sizeof(info));
    set_siginfo(t.tid(), info);
    if (hook_)
        hook_->on_signal(t, e);
    t.inject_signal = e.signo;
    if (wait_mask)
        enter_handler_under_wait_mask(t, e.signo, own_mask);
}

void Replayer::force_default_action(Task& t, int signo, bool always)
{
    uint64_t mask = thread_sigmask(t.tid());
    bool blocked = (mask & signal_bit(signo)) != 0;
    bool ignored = is_ignored(t.tid(), signo);
    if (!always && !blocked && !ignored)
        return; // its handler runs, as in the recording
    if (blocked) {
        set_thread_sigmask(t.tid(), mask & ~signal_bit(signo));
        t.mask_changed();
    }
    if (!ignored && !has_handler(t.tid(), signo))
        return;
    // rt_sigaction(signo, {SIG_DFL}, NULL, 8), its struct in scratch memory
    // below the stack, put back after.
    struct {
        uint64_t handler, flags, restorer, mask;
    } dfl = {0, 0, 0, 0};
    uint64_t at = (t.regs()[Registers::RSP] - kScratchBelowStack - 64) & ~uint64_t(15);
    TraceeMemory mem = t.memory();
    std::vector<uint8_t> saved(sizeof dfl);
    if (!mem.read(RemoteAddr(at), saved) ||
        !mem.write(RemoteAddr(at), {reinterpret_cast<const uint8_t*>(&dfl), sizeof dfl}))
        diverge(t, "cannot give " + signal_name(signo) + " its default action (scratch memory at " + hex(at) + ")");
    int64_t r = inject_syscall(t, SYS_rt_sigaction, {static_cast<uint64_t>(signo), at, 0, 8, 0, 0});
    mem.write(RemoteAddr(at), saved);
    if (r != 0)
        diverge(t, "cannot give " + signal_name(signo) + " its default action: " + strerror(static_cast<int>(-r)));
}

void Replayer::enter_handler_under_wait_mask(Task& t, int signo, uint64_t own_mask)
{
    if (!has_handler(t.tid(), signo)) {
        // No frame: the wait's mask ends with the syscall, as in the kernel.
        set_thread_sigmask(t.tid(), own_mask);
        t.mask_changed();
        return;
    }
    // The kernel builds the frame with the wait's mask and runs the handler
    // under it; the frame keeps the thread's own mask for rt_sigreturn. One
    // step delivers the signal and stops at the handler's first instruction,
    // where the frame is corrected.
    EngineSteps mine(engine_step_); // the trap is the engine's, not a debugger's
    resume(t, Resume::Emulate, true);
    StopInfo s = wait_stop(t, "the handler of " + signal_name(signo));
    if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP)
        diverge(t, "expected to enter the handler of " + signal_name(signo) + ", got " + describe_stop(t, s));
    uint64_t at = frame_sigmask_address(t.regs());
    if (!t.memory().write(RemoteAddr(at), {reinterpret_cast<const uint8_t*>(&own_mask), sizeof own_mask}))
        diverge(t, "cannot write the signal frame of " + signal_name(signo) + " at " + hex(at));
}

bool Replayer::at_signal_point(Task& t, const SignalEvent& e)
{
    // The pages the recorded round wrote tell rounds of a loop apart that
    // differ only in memory (supervisor_signal_probe.cpp).
    return same_registers(t.regs(), e.regs) && (e.pages.empty() || page_digest(t.tid(), e.pages) == e.pages_hash);
}

bool Replayer::reach_position_in_self_loop(Task& t, const SignalEvent& e)
{
    // `loop .` (e2 fe) does nothing but take one from rcx, and goes on
    // while it is not 0: from its first execution with rcx at or above the
    // recorded count, the executions the search would judge one by one
    // differ in rcx alone, down to the recorded one. (A delay loop takes
    // millions: a stop, or a filter's run in the kernel, for each.)
    uint64_t rip = e.regs[Registers::RIP];
    std::vector<uint8_t> code(2);
    if (!perfclock::breakpoints_work() || e.regs[Registers::RCX] == 0 || !t.memory().read(RemoteAddr(rip), code) ||
        code[0] != 0xe2 || code[1] != 0xfe)
        return false;
    {
        perfclock::BreakpointCounter bp(t.tid(), perfclock::BreakpointKind::Execute, rip, 8, 1, kTagEngine);
        resume(t, Resume::Emulate);
        StopInfo s = wait_stop(t, "the loop where " + signal_name(e.signo) + " was delivered (rip " + hex(rip) + ")");
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP ||
            get_siginfo(t.tid()).si_code != kTrapPerf)
            diverge(t, "the thread never reached the loop where the recording delivered " + signal_name(e.signo) +
                           " (rip " + hex(rip) + "); instead: " + describe_stop(t, s));
    }
    Registers now = t.regs();
    if (now[Registers::RCX] < e.regs[Registers::RCX])
        return false; // past it in this run of the loop
    Registers there = now;
    there[Registers::RCX] = e.regs[Registers::RCX];
    if (!same_registers(there, e.regs))
        return false;
    t.set_regs(there);
    if (e.pages.empty() || page_digest(t.tid(), e.pages) == e.pages_hash)
        return true;
    t.set_regs(now);
    return false;
}

void Replayer::reach_position(Task& t, const SignalEvent& e)
{
    // The recording interrupted the thread in user code: find the same
    // instruction with the same registers again. Each execution of that
    // instruction since the last syscall costs one breakpoint hit, unless
    // the breakpoint's filter judges the executions in the kernel (where
    // the recording kept the pages' sum, or had no pages).
    uint64_t rip = e.regs[Registers::RIP];
    if (reach_position_in_self_loop(t, e))
        return;
    if (!perfclock::breakpoints_work()) {
        reach_position_by_int3(t, e);
        return;
    }
    perfclock::BreakpointCounter bp(t.tid(), perfclock::BreakpointKind::Execute, rip, 8, 1, kTagEngine);
    bool filtered = false;
    if (e.pages.empty() || e.pages_sum != 0)
        if (PositionMatchFilter* filter = PositionMatchFilter::get())
            filtered = filter->attach(bp.fd(), e.regs, e.pages, e.pages_sum);
    // Every unfiltered execution is a stop, so the watchdog alone would
    // never fire: the whole search gets the watchdog's time.
    auto give_up = steady_now() + options_.watchdog;
    uint64_t hits = 0, with_registers = 0;
    auto missed = [&](const std::string& instead) {
        diverge(t,
                "the thread never reached the point where the recording delivered " + signal_name(e.signo) + " (rip " +
                    hex(rip) + ")",
                "  " + std::to_string(hits) + (filtered ? " stops of the filtered breakpoint, " : " executions, ") +
                    std::to_string(with_registers) + " with the recorded registers, none also with the recorded " +
                    std::to_string(e.pages.size()) + " pages\n  instead: " + instead);
    };
    for (;;) {
        resume(t, Resume::Emulate);
        StopInfo s = wait_stop(t, "the point where " + signal_name(e.signo) + " was delivered (rip " + hex(rip) + ", " +
                                      std::to_string(hits) + " breakpoint hits so far)");
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP ||
            get_siginfo(t.tid()).si_code != kTrapPerf)
            missed(describe_stop(t, s));
        hits++;
        if (same_registers(t.regs(), e.regs)) {
            with_registers++;
            if (e.pages.empty() || page_digest(t.tid(), e.pages) == e.pages_hash) {
                if (std::getenv("REWIND_DEBUG"))
                    std::fprintf(stderr, "[replay] %s found in user code at rip %s after %llu stops (%s)\n",
                                 signal_name(e.signo).c_str(), hex(rip).c_str(), static_cast<unsigned long long>(hits),
                                 filtered ? "breakpoint filtered in the kernel" : "a stop at each execution");
                return;
            }
        }
        if (steady_now() > give_up)
            position_search_stuck(t, e, hits);
    }
}

void Replayer::position_search_stuck(Task& t, const SignalEvent& e, uint64_t executions)
{
    throw ReplayError(ReplayErrorKind::Stuck, current_, t.recorded_tid(),
                      "thread " + std::to_string(t.recorded_tid()) + " did not reach the point where the recording " +
                          "delivered " + signal_name(e.signo) + " (rip " + hex(e.regs[Registers::RIP]) + ") within " +
                          std::to_string(options_.watchdog.count()) + " s",
                      "  " + std::to_string(executions) +
                          " stops at that instruction so far. A signal delivered in user code is found again by a "
                          "breakpoint on its instruction: every execution since the thread's last syscall is "
                          "judged, in the kernel where the breakpoint filter loads, else at a stop each");
}

void Replayer::reach_position_by_int3(Task& t, const SignalEvent& e)
{
    uint64_t rip = e.regs[Registers::RIP];
    std::optional<perfclock::InstructionTrap> trap;
    try {
        trap.emplace(t.tid(), rip);
    } catch (const std::exception& x) {
        diverge(t, "cannot find the point where the recording delivered " + signal_name(e.signo) + ": " + x.what());
    }
    perfclock::EngineInt3 active(engine_int3_, rip);
    auto give_up = steady_now() + options_.watchdog; // (as in reach_position)
    for (uint64_t hits = 0;; hits++) {
        resume(t, Resume::Emulate);
        StopInfo s = wait_stop(t, "the point where " + signal_name(e.signo) + " was delivered (rip " + hex(rip) + ", " +
                                      std::to_string(hits) + " breakpoint hits so far)");
        if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP || t.regs()[Registers::RIP] != rip)
            diverge(t, "the thread never reached the point where the recording delivered " + signal_name(e.signo) +
                           " (rip " + hex(rip) + "); instead: " + describe_stop(t, s));
        if (at_signal_point(t, e))
            return;
        if (steady_now() > give_up)
            position_search_stuck(t, e, hits + 1);
        step_over_engine_int3(t, *trap);
    }
}

void Replayer::on_rdtsc(const RdtscEvent& e)
{
    Task& t = task(e.tid);
    collect_fresh(t);
    resume(t, Resume::Emulate);
    restartable_ = true;
    StopInfo s = wait_stop(t, std::string(e.rdtscp ? "rdtscp" : "rdtsc") + " at " + hex(e.ip));
    restartable_ = false;
    if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGSEGV)
        diverge(t, std::string("expected ") + (e.rdtscp ? "rdtscp" : "rdtsc") + " at " + hex(e.ip) + ", got " +
                       describe_stop(t, s));
    Registers r = t.regs();
    auto insn = decode_tsc_instruction(t.memory(), r[Registers::RIP]);
    if (get_siginfo(t.tid()).si_code != SI_KERNEL || !insn || r[Registers::RIP] != e.ip || insn->rdtscp != e.rdtscp)
        diverge(t, std::string("expected ") + (e.rdtscp ? "rdtscp" : "rdtsc") + " at " + hex(e.ip) +
                       ", got a SIGSEGV at " + hex(r[Registers::RIP]));
    apply_tsc(r, *insn, e.tsc, e.aux);
    t.set_regs(r);
}

void Replayer::on_random(const RandomEvent& e)
{
    // No trap exists for rdrand: the recorder kept an int3 on it, and replay
    // puts one there for the thread's next run.
    const std::string what = std::string(e.seed ? "rdseed" : "rdrand") + " at " + hex(e.ip);
    Task& t = task(e.tid);
    collect_fresh(t);
    std::optional<perfclock::InstructionTrap> trap;
    try {
        plant_engine_trap(trap, t, e.ip);
    } catch (const std::exception& x) {
        diverge(t, "cannot stop at the " + what + ": " + x.what());
    }
    uint8_t code[16] = {};
    t.memory().read_partial(RemoteAddr(e.ip), code);
    code[0] = trap->original();
    auto insn = decode_random_instruction(code);
    if (!insn || insn->seed != e.seed)
        diverge(t, "the recording ran " + what + "; the replayed code there is another instruction");
    if (hook_ && hook_->byte_under_breakpoint(t, e.ip) && warned_random_breakpoints_.insert(e.ip).second)
        std::fprintf(stderr,
                     "rewind: a breakpoint at %s is on an %s instruction, which replay runs in the program's place: "
                     "it does not stop there (put it on the next instruction)\n",
                     hex(e.ip).c_str(), e.seed ? "rdseed" : "rdrand");
    perfclock::EngineInt3 active(engine_int3_, e.ip);
    resume(t, Resume::Emulate);
    StopInfo s = wait_stop(t, what);
    if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGTRAP || t.regs()[Registers::RIP] != e.ip)
        diverge(t, "expected the " + what + ", got " + describe_stop(t, s));
    if (hook_)
        hook_->on_event_point(t); // a debugger's position just before the instruction
    Registers r = t.regs();
    apply_random(r, *insn, e.ip, e.value);
    t.set_regs(r);
}

} // namespace rw::replay
