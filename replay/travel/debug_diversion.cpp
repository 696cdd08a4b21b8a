// Diversions: when the debugger writes registers or memory (an inferior
// call such as `print f(x)`, `set var`, `jump`), the writes and whatever
// runs after them happen in a copy of the process (fork), never in the
// replay. The copy goes away when the debugger resumes with the registers
// as they were (the end of an inferior call, or changes to memory only),
// and the replay continues exactly as recorded.
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "debug_session.h"
#include "event_format.h"
#include "register_file.h"

namespace rw::replay {
namespace {

// What a diverted copy may run for real: its own memory, identity and
// clocks. Anything else could reach outside (files, sockets, other
// processes) and is answered with ENOSYS.
bool runs_in_copy(long nr)
{
    switch (nr) {
    case SYS_brk:
    case SYS_mmap:
    case SYS_munmap:
    case SYS_mremap:
    case SYS_mprotect:
    case SYS_madvise:
    case SYS_getpid:
    case SYS_gettid:
    case SYS_getppid:
    case SYS_getuid:
    case SYS_geteuid:
    case SYS_getgid:
    case SYS_getegid:
    case SYS_getrandom:
    case SYS_clock_gettime:
    case SYS_clock_getres:
    case SYS_gettimeofday:
    case SYS_time:
    case SYS_sched_yield:
    case SYS_rt_sigprocmask:
    case SYS_rt_sigaction:
    case SYS_exit:
    case SYS_exit_group:
        return true;
    default:
        return false;
    }
}

bool same_registers(Registers a, Registers b, bool ignore_orig_rax)
{
    a[Registers::EFLAGS] &= ~kResumeFlag;
    b[Registers::EFLAGS] &= ~kResumeFlag;
    if (ignore_orig_rax)
        a[Registers::ORIG_RAX] = b[Registers::ORIG_RAX];
    return a == b;
}

} // namespace

void DebugSession::ensure_diversion()
{
    if (diversion_)
        return;
    Task* t = debugged_task();
    if (!t)
        throw ReplayError(ReplayErrorKind::Refused, position_.event, current_tid_, "no process to change");
    pid_t copy = engine_.copy_process(*t);
    auto d = std::make_unique<Diversion>();
    d->group->tgid = copy;
    d->group->recorded_tgid = t->group().recorded_tgid;
    d->group->fds = t->fds_ptr();
    d->task = std::make_unique<Task>(copy, t->recorded_tid(), d->group, d->vm);
    d->task->at = Task::At::EventStop;
    d->start = t->regs();
    breakpoints_.lift(*t);
    breakpoints_.apply(*d->task);
    diversion_ = std::move(d);
}

void DebugSession::end_diversion()
{
    if (!diversion_)
        return;
    Task& c = *diversion_->task;
    if (!diversion_->exited) {
        breakpoints_.lift(c);
        engine_.waiter().discard(c.tid());
        ::kill(c.tid(), SIGKILL);
    }
    diversion_.reset();
    if (Task* t = debugged_task())
        breakpoints_.apply(*t);
}

bool DebugSession::diversion_restored()
{
    if (diversion_->exited)
        return false;
    return same_registers(get_registers(diversion_->task->tid()), diversion_->start, false);
}

void DebugSession::leave_diversion_if_restored()
{
    if (!diversion_ || !diversion_restored())
        return;
    // Memory written and never run with (`set var`), unlike the scaffolding
    // of an inferior call, which runs: the user meant to change the program.
    if (diversion_->unrun_writes)
        std::fprintf(stderr, "rewind: the changes made from the debugger are dropped: the replay goes on as "
                             "recorded\n");
    end_diversion();
}

StopReport DebugSession::run_diversion(bool step, int signal)
{
    StopReport r = stop(StopReport::Kind::Signal);
    if (diversion_->exited) {
        r.kind = StopReport::Kind::Exited;
        r.exit_status = diversion_->exit_status;
        return r;
    }
    Task& c = *diversion_->task;
    diversion_->unrun_writes = false;
    breakpoints_.apply(c);
    // A step onto a syscall instruction runs the call, then reports the step.
    bool step_syscall = false;
    if (step) {
        uint8_t insn[2] = {};
        if (c.memory().read_partial(RemoteAddr(c.regs()[Registers::RIP]), insn) == 2 && insn[0] == 0x0f &&
            insn[1] == 0x05)
            step_syscall = true;
    }
    c.inject_signal = signal;
    c.resume(Resume::Syscall, step && !step_syscall);
    // Set on a syscall's entry when the copy must not run it: its result then.
    bool overridden = false;
    int64_t result_override = 0;
    for (;;) {
        auto s = engine_.waiter().wait_for(c.tid(), std::chrono::hours(24));
        if (!s)
            continue;
        switch (s->kind) {
        case StopInfo::Kind::Exited:
        case StopInfo::Kind::Signaled:
            diversion_->exited = true;
            diversion_->exit_status = s->kind == StopInfo::Kind::Exited ? (s->exit_code << 8) : s->signal;
            r.kind = StopReport::Kind::Exited;
            r.exit_status = diversion_->exit_status;
            return r;
        case StopInfo::Kind::SyscallStop: {
            Registers regs = c.regs();
            if (!diversion_->in_syscall) {
                diversion_->in_syscall = true;
                long nr = static_cast<long>(regs[Registers::ORIG_RAX]);
                int fd = static_cast<int>(regs[Registers::RDI]);
                if (nr == SYS_write && (fd == 1 || fd == 2)) {
                    // The copy's output shows, as the program's would.
                    std::vector<uint8_t> buf(std::min<uint64_t>(regs[Registers::RDX], 1 << 20));
                    size_t n = c.memory().read_partial(RemoteAddr(regs[Registers::RSI]), buf);
                    int out = fd == 1 ? engine_.options().stdout_fd : engine_.options().stderr_fd;
                    if (::write(out, buf.data(), n) < 0) {
                    }
                    result_override = static_cast<int64_t>(n);
                    overridden = true;
                } else if (!runs_in_copy(nr)) {
                    if (diversion_->warned.insert(nr).second)
                        std::fprintf(stderr,
                                     "rewind: code run by the debugger called %s(), which could reach outside the "
                                     "replay: it returned ENOSYS\n",
                                     syscall_name(static_cast<int>(nr)).c_str());
                    result_override = -ENOSYS;
                    overridden = true;
                }
                if (overridden) {
                    regs[Registers::ORIG_RAX] = static_cast<uint64_t>(-1); // skip it
                    c.set_regs(regs);
                }
            } else {
                diversion_->in_syscall = false;
                if (overridden) {
                    regs[Registers::RAX] = static_cast<uint64_t>(result_override);
                    c.set_regs(regs);
                    overridden = false;
                }
                if (step_syscall) {
                    c.at = Task::At::SyscallExit;
                    r.kind = StopReport::Kind::Step;
                    return r;
                }
            }
            c.resume(Resume::Syscall);
            continue;
        }
        case StopInfo::Kind::SignalDelivery: {
            c.at = Task::At::SignalStop;
            if (s->signal != SIGTRAP) {
                r.signal = s->signal; // delivered if the debugger passes it on (C/S)
                return r;
            }
            siginfo_t si = get_siginfo(c.tid());
            Registers regs = c.regs();
            uint64_t rip = regs[Registers::RIP];
            if (si.si_code == SI_KERNEL && breakpoints_.has_software(rip - 1)) {
                regs[Registers::RIP] = rip - 1;
                c.set_regs(regs);
                r.kind = StopReport::Kind::SoftwareBreak;
            } else if (si.si_code == kTrapTrace || si.si_code == SIGTRAP) {
                r.kind = StopReport::Kind::Step;
            } else if (si.si_code == kTrapPerf) {
                auto hw = breakpoints_.hardware_for_tag(perf_data(si));
                if (hw && hw->kind != perfclock::BreakpointKind::Execute) {
                    r.kind = StopReport::Kind::Watch;
                    r.watch_addr = hw->addr;
                    r.watch_access = hw->kind == perfclock::BreakpointKind::Write ? 1 : 2;
                } else {
                    r.kind = StopReport::Kind::HardwareBreak;
                }
            }
            return r;
        }
        default:
            // A fork, clone or exec in the copy: let it go on.
            c.resume(Resume::Syscall);
            continue;
        }
    }
}

// ---- registers and memory, from the copy when there is one ---------------

pid_t DebugSession::process_of(Tid tid)
{
    if (diversion_ && !diversion_->exited && diversion_->task->recorded_tid() == tid)
        return diversion_->task->tid();
    Task* t = engine_.find_task(tid);
    return t ? t->tid() : 0;
}

Registers DebugSession::registers(Tid tid)
{
    pid_t real = process_of(tid);
    if (!real)
        throw ReplayError(ReplayErrorKind::Refused, position_.event, tid, "no such thread");
    return get_registers(real);
}

void DebugSession::write_registers(Tid tid, const RegisterFile& regs)
{
    pid_t real = process_of(tid);
    if (!real)
        throw ReplayError(ReplayErrorKind::Refused, position_.event, tid, "no such thread");
    RegisterFile now = read_register_file(real);
    // gdb sets orig_rax to -1 whenever it sets up a resumption; replay
    // decides syscall restarts itself, as recorded.
    bool same = same_registers(regs.gp, now.gp, !diversion_) && std::memcmp(&regs.fp, &now.fp, sizeof(now.fp)) == 0 &&
                regs.ymm_high == now.ymm_high;
    if (same)
        return;
    ensure_diversion();
    if (diversion_->task->recorded_tid() != tid)
        throw ReplayError(ReplayErrorKind::Refused, position_.event, tid, "only the stopped thread can be changed");
    write_register_file(diversion_->task->tid(), regs);
    diversion_->task->set_regs(regs.gp);
}

size_t DebugSession::read_memory(uint64_t addr, std::span<uint8_t> out)
{
    pid_t real = diversion_ && !diversion_->exited ? diversion_->task->tid() : 0;
    if (!real) {
        Task* t = debugged_task();
        if (!t)
            return 0;
        real = t->tid();
    }
    size_t n = TraceeMemory(real).read_partial(RemoteAddr(addr), out);
    breakpoints_.hide(addr, out.first(n));        // gdb reads memory without its int3s, as with gdbserver
    engine_.hide_engine_int3(addr, out.first(n)); // nor the replay's own (an rdrand's, a sync call's)
    return n;
}

bool DebugSession::write_memory(uint64_t addr, std::span<const uint8_t> data)
{
    std::vector<uint8_t> now(data.size());
    if (read_memory(addr, now) == data.size() && std::memcmp(now.data(), data.data(), data.size()) == 0)
        return true;
    ensure_diversion();
    diversion_->unrun_writes = true;
    return TraceeMemory(diversion_->task->tid()).write(RemoteAddr(addr), data);
}

} // namespace rw::replay
