#include "task.h"

#include <sys/ptrace.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <system_error>

namespace rw::replay {

namespace {

constexpr uint64_t sigtrap_bit()
{
    return uint64_t(1) << (SIGTRAP - 1);
}

} // namespace

Task::Task(pid_t tid, Tid recorded_tid, std::shared_ptr<ThreadGroup> group, std::shared_ptr<AddressSpace> vm)
    : tid_(tid), recorded_tid_(recorded_tid), group_(std::move(group)), vm_(std::move(vm))
{
    group_->tasks.push_back(this);
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
    bool user_code_only = !(at == At::SyscallEntry && how != Resume::Emulate) && inject_signal == 0;
    uint64_t blocked = 0;
    reblock_due_ = user_code_only && ::ptrace(PTRACE_GETSIGMASK, tid_, sizeof blocked, &blocked) == 0 &&
                   (blocked & sigtrap_bit()) != 0;
    if (reblock_due_) {
        uint64_t open = blocked & ~sigtrap_bit();
        ::ptrace(PTRACE_SETSIGMASK, tid_, sizeof open, &open);
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

} // namespace rw::replay

namespace rw::replay {

void Task::reblock_sigtrap()
{
    if (!reblock_due_)
        return;
    reblock_due_ = false;
    uint64_t blocked = 0;
    if (::ptrace(PTRACE_GETSIGMASK, tid_, sizeof blocked, &blocked) == 0 && (blocked & sigtrap_bit()) == 0) {
        blocked |= sigtrap_bit();
        ::ptrace(PTRACE_SETSIGMASK, tid_, sizeof blocked, &blocked);
    }
}

} // namespace rw::replay
