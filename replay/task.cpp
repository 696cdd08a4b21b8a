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
    uint64_t blocked = 0;
    sigtrap_blocked_ =
        ::ptrace(PTRACE_GETSIGMASK, tid_, sizeof blocked, &blocked) == 0 && (blocked & sigtrap_bit()) != 0;
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
    if (!sigtrap_blocked_)
        return;
    uint64_t blocked = 0;
    if (::ptrace(PTRACE_GETSIGMASK, tid_, sizeof blocked, &blocked) == 0 && (blocked & sigtrap_bit()) == 0) {
        blocked |= sigtrap_bit();
        ::ptrace(PTRACE_SETSIGMASK, tid_, sizeof blocked, &blocked);
    }
}

} // namespace rw::replay
