#include "remote_syscall.h"

#include <csignal>
#include <cstring>
#include <stdexcept>

#include "stop_waiter.h"
#include "stray_signal.h"
#include "task.h"
#include "tracee.h"
#include "syscall_restart.h"

namespace rw::replay {
namespace {

constexpr size_t kScratchBytes = 8192;

} // namespace

RemoteSyscalls::RemoteSyscalls(Task& task, StopWaiter& waiter, OwnStop own_stop)
    : task_(task), waiter_(waiter), own_stop_(std::move(own_stop))
{
    saved_ = task_.regs();
}

RemoteSyscalls::~RemoteSyscalls()
{
    if (!finished_) {
        try {
            finish(static_cast<int64_t>(saved_[Registers::RAX]));
        } catch (...) {
        }
    }
}

void RemoteSyscalls::wait_syscall_stop(const char* what)
{
    for (;;) {
        auto stop = waiter_.wait_for(task_.tid(), std::chrono::seconds(30));
        // A debugger's perf event (a task-clock alarm, a breakpoint on the
        // syscall instruction run again) is not about the program: the
        // injected call goes on.
        // Nor is a signal the replayed world raised (a fork snapshot ended
        // by the replayer sends its parent SIGCHLD).
        if (stop && stop->kind == StopInfo::Kind::SignalDelivery &&
            ((stop->signal == SIGTRAP && get_siginfo(task_.tid()).si_code == kTrapPerf) ||
             is_stray_signal(task_.tid(), stop->signal))) {
            task_.resume(Resume::Syscall);
            continue;
        }
        if (stop && own_stop_ && own_stop_(*stop)) {
            task_.resume(Resume::Syscall);
            continue;
        }
        if (!stop)
            throw std::runtime_error(std::string("an injected syscall did not reach its ") + what + " within 30 s");
        if (stop->kind != StopInfo::Kind::SyscallStop) {
            std::string instead = stop->kind == StopInfo::Kind::SignalDelivery
                                      ? "a stop for " + signal_name(stop->signal) + " (code " +
                                            std::to_string(get_siginfo(task_.tid()).si_code) + ")"
                                      : "a stop of kind " + std::to_string(static_cast<int>(stop->kind)) +
                                            " (wait status " + std::to_string(stop->raw) + ")";
            throw std::runtime_error(std::string("an injected syscall did not reach its ") + what + ": " + instead +
                                     " came first");
        }
        return;
    }
}

int64_t RemoteSyscalls::call(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    for (;;) {
        int64_t ret = call_once(nr, a0, a1, a2, a3, a4, a5);
        // A signal came while the call waited (an openat the seccomp
        // listener lets through, interrupted by the debugger's look or an
        // alarm): it did nothing, and runs again, as the kernel would run it.
        if (!restarts(ret))
            return ret;
    }
}

int64_t RemoteSyscalls::call_once(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    Registers r = saved_;
    r[Registers::RDI] = a0;
    r[Registers::RSI] = a1;
    r[Registers::RDX] = a2;
    r[Registers::R10] = a3;
    r[Registers::R8] = a4;
    r[Registers::R9] = a5;
    if (first_) {
        // At an entry stop the kernel runs whatever orig_rax then says.
        r[Registers::ORIG_RAX] = static_cast<uint64_t>(nr);
        task_.set_regs(r);
        task_.resume(Resume::Syscall);
        wait_syscall_stop("exit");
        first_ = false;
    } else {
        // Back to the syscall instruction the program just executed.
        r[Registers::RIP] = saved_[Registers::RIP] - 2;
        r[Registers::RAX] = static_cast<uint64_t>(nr);
        task_.set_regs(r);
        task_.resume(Resume::Syscall);
        wait_syscall_stop("entry");
        task_.resume(Resume::Syscall);
        wait_syscall_stop("exit");
    }
    task_.at = Task::At::SyscallExit;
    return static_cast<int64_t>(task_.regs()[Registers::RAX]);
}

uint64_t RemoteSyscalls::push_string(const std::string& s)
{
    if (!scratch_) {
        scratch_ = (saved_[Registers::RSP] - kScratchBelowStack - kScratchBytes) & ~uint64_t(15);
        scratch_saved_.resize(kScratchBytes);
        if (!task_.memory().read(RemoteAddr(scratch_), scratch_saved_))
            throw std::runtime_error("no scratch memory below the stack of task " + std::to_string(task_.tid()));
    }
    if (scratch_used_ + s.size() + 1 > kScratchBytes)
        throw std::runtime_error("injected syscall arguments too long");
    uint64_t addr = scratch_ + scratch_used_;
    std::vector<uint8_t> bytes(s.begin(), s.end());
    bytes.push_back(0);
    if (!task_.memory().write(RemoteAddr(addr), bytes))
        throw std::runtime_error("cannot write scratch memory of task " + std::to_string(task_.tid()));
    scratch_used_ += (bytes.size() + 15) & ~size_t(15);
    return addr;
}

void RemoteSyscalls::enter_original()
{
    if (first_) {
        finished_ = true; // nothing was injected: still at that entry
        return;
    }
    finish(static_cast<int64_t>(saved_[Registers::ORIG_RAX]));
    Registers r = saved_;
    r[Registers::RIP] = saved_[Registers::RIP] - 2;
    r[Registers::RAX] = saved_[Registers::ORIG_RAX];
    task_.set_regs(r);
    task_.resume(Resume::Syscall);
    wait_syscall_stop("entry");
    task_.set_regs(saved_); // the entry's own rax (-ENOSYS) and arguments
    task_.at = Task::At::SyscallEntry;
}

void RemoteSyscalls::finish(int64_t result)
{
    finished_ = true;
    if (scratch_)
        task_.memory().write(RemoteAddr(scratch_), scratch_saved_);
    Registers r = saved_;
    r[Registers::RAX] = static_cast<uint64_t>(result);
    task_.set_regs(r);
}

} // namespace rw::replay
