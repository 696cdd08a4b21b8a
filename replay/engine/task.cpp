#include "task.h"

#include <sys/ptrace.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <system_error>

namespace rw::replay {

Task::Task(pid_t tid, Tid recorded_tid, std::shared_ptr<ThreadGroup> group, std::shared_ptr<AddressSpace> vm)
    : tid_(tid), recorded_tid_(recorded_tid), group_(std::move(group)), vm_(std::move(vm))
{
    group_->tasks.push_back(this);
    vm_->tasks.push_back(this);
}

void Task::take_leader_id(pid_t tid, Tid recorded_tid)
{
    tid_ = tid;
    recorded_tid_ = recorded_tid;
    regs_.reset();
    known_mask_.reset();
}

void Task::move_to(std::shared_ptr<AddressSpace> vm)
{
    auto& old = vm_->tasks;
    old.erase(std::remove(old.begin(), old.end(), this), old.end());
    vm_ = std::move(vm);
    vm_->tasks.push_back(this);
}

const Registers& Task::regs()
{
    if (!regs_)
        regs_ = get_registers(tid_);
    return *regs_;
}

void Task::set_regs(const Registers& regs)
{
    set_registers(tid_, regs);
    regs_ = regs;
}

void Task::resume(Resume how, bool step)
{
    long request;
    if (step)
        request = how == Resume::Emulate ? PTRACE_SYSEMU_SINGLESTEP : PTRACE_SINGLESTEP;
    else
        request = how == Resume::Emulate ? PTRACE_SYSEMU : how == Resume::Syscall ? PTRACE_SYSCALL : PTRACE_CONT;
    regs_.reset();
    // Only the thread's own code runs until the next stop (no syscall runs
    // now, no signal is handed over now): the program cannot change or see
    // its mask before that stop, so SIGTRAP's bit is ours to manage there.
    // A hardware breakpoint's SIGTRAP (perf) is not forced: blocked, it
    // never stops the thread, and replay could not reach a point the
    // recording preempted it at, or a debugger's count. It is let through
    // until the stop; a forced SIGTRAP (int3, single step) unblocks it by
    // itself. The stop blocks it again (reblock_sigtrap).
    reblock_sigtrap(); // in case the last stop was taken past Replayer::wait_stop
    // (From an emulated entry, a notified run skips the syscall too.)
    bool skips_syscall = how == Resume::Emulate || (how == Resume::Notified && emulated_entry);
    bool user_code_only = !(at == At::SyscallEntry && !skips_syscall) && inject_signal == 0;
    if (user_code_only) {
        // Read once per run of resumes that only ran the thread's own code:
        // nothing between them could change it (mask_changed() says when
        // replay itself does), and the read is a sixth of the tracer's
        // syscalls per emulated syscall.
        if (!known_mask_)
            known_mask_ = get_sigmask(tid_);
        auto mask = known_mask_;
        if (mask && (*mask & signal_bit(SIGTRAP)) != 0) {
            set_sigmask(tid_, *mask & ~signal_bit(SIGTRAP));
            mask_to_restore_ = *mask;
        }
    } else {
        known_mask_.reset(); // a syscall runs or a signal is delivered: either may change it
    }
    int sig = inject_signal;
    inject_signal = 0;
    if (::ptrace(static_cast<__ptrace_request>(request), tid_, nullptr, reinterpret_cast<void*>(long(sig))) != 0)
        throw std::system_error(errno, std::generic_category(), "resuming task " + std::to_string(tid_));
    at = At::Running;
    emulated_entry = false;
    last_resume = how;
    last_resume_stepped = step;
}

void Task::resume_untouched()
{
    regs_.reset();
    if (::ptrace(PTRACE_SYSCALL, tid_, nullptr, nullptr) != 0)
        throw std::system_error(errno, std::generic_category(), "resuming task " + std::to_string(tid_));
}

void Task::reblock_sigtrap()
{
    // Only the thread's own code ran since the resume: its mask is still
    // the one resume() read.
    if (mask_to_restore_)
        set_sigmask(tid_, *mask_to_restore_);
    mask_to_restore_.reset();
}

} // namespace rw::replay
