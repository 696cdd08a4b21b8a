#include "thread_injector.h"

#include <sys/ptrace.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "syscall_restart.h"
#include "tracee.h"
#include "tsc.h"

namespace rw {
namespace {

constexpr uint64_t kBelowStack = 16384;

InjectionHook& injection_hook()
{
    static InjectionHook hook;
    return hook;
}

} // namespace

void set_injection_hook(InjectionHook hook)
{
    injection_hook() = std::move(hook);
}

uint64_t find_syscall_instruction(pid_t pid)
{
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    struct Range {
        uint64_t start, end;
        bool vdso;
    };
    std::vector<Range> ranges;
    while (std::getline(maps, line)) {
        std::istringstream in(line);
        std::string span, perms;
        in >> span >> perms;
        if (perms.size() < 3 || perms[2] != 'x')
            continue;
        auto dash = span.find('-');
        uint64_t start = std::stoull(span.substr(0, dash), nullptr, 16);
        uint64_t end = std::stoull(span.substr(dash + 1), nullptr, 16);
        ranges.push_back({start, end, line.find("[vdso]") != std::string::npos});
    }
    // The vDSO first: small, always there, and its code never changes.
    std::stable_partition(ranges.begin(), ranges.end(), [](const Range& r) { return r.vdso; });
    TraceeMemory mem(pid);
    for (const auto& r : ranges) {
        std::vector<uint8_t> code(std::min<uint64_t>(r.end - r.start, 1 << 20));
        size_t n = mem.read_partial(RemoteAddr(r.start), code);
        for (size_t i = 0; i + 1 < n; i++)
            if (code[i] == 0x0f && code[i + 1] == 0x05)
                return r.start + i;
    }
    return 0;
}

void ThreadInjector::run_to_syscall_stop(const char* what, bool entry)
{
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, tid_, nullptr, nullptr) != 0)
            throw std::runtime_error(std::string("cannot resume thread ") + std::to_string(tid_) + " for " + what +
                                     ": " + strerror(errno));
        int status = 0;
        if (waitpid(tid_, &status, __WALL) != tid_)
            throw std::runtime_error("lost thread " + std::to_string(tid_) + " during " + what);
        StopInfo s = decode_wait_status(status);
        switch (s.kind) {
        case StopInfo::Kind::SyscallStop:
            return;
        case StopInfo::Kind::SignalDelivery: {
            // A fault of the thread itself (the injected call could not
            // run there): going on would fault again forever.
            siginfo_t si = get_siginfo(tid_);
            // The rdtsc trap (PR_TSC_SIGSEGV) of the instruction the thread
            // stands at, pending when the call was injected: that rdtsc runs
            // again when the thread does (and traps again if it must).
            if (entry && s.signal == SIGSEGV && si.si_code == SI_KERNEL &&
                decode_tsc_instruction(TraceeMemory(tid_), own_rip_))
                continue;
            bool fault = (s.signal == SIGSEGV || s.signal == SIGBUS || s.signal == SIGILL || s.signal == SIGFPE ||
                          s.signal == SIGTRAP) &&
                         si.si_code > 0;
            if (fault)
                throw std::runtime_error(std::string("thread ") + std::to_string(tid_) + " faulted (signal " +
                                         std::to_string(s.signal) + ") during " + what);
            arrived_.push_back(s.signal); // held back: the caller delivers it later
            continue;
        }
        case StopInfo::Kind::PtraceEvent: // (an injected clone's: its result names the child)
            continue;
        case StopInfo::Kind::GroupStop:
            continue;
        case StopInfo::Kind::Exited:
        case StopInfo::Kind::Signaled:
            throw std::runtime_error("thread " + std::to_string(tid_) + " ended during " + what);
        }
    }
}

int64_t ThreadInjector::call(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    if (!insn_)
        throw std::runtime_error("no syscall instruction found in process of thread " + std::to_string(tid_));
    Registers saved = get_registers(tid_);
    own_rip_ = saved[Registers::RIP];
    if (injection_hook())
        injection_hook()(tid_, &saved, insn_);
    Registers r = saved;
    r[Registers::RIP] = insn_;
    r[Registers::RAX] = static_cast<uint64_t>(nr);
    r[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    r[Registers::RDI] = a0;
    r[Registers::RSI] = a1;
    r[Registers::RDX] = a2;
    r[Registers::R10] = a3;
    r[Registers::R8] = a4;
    r[Registers::R9] = a5;
    std::string what = "injected syscall " + std::to_string(nr);
    int64_t result = 0;
    try {
        // A signal that comes meanwhile is held (arrived()), so a call it
        // interrupted before it did anything is made again, as the kernel
        // would once no handler runs (a fork among exiting children).
        for (int attempt = 0;; attempt++) {
            set_registers(tid_, r);
            run_to_syscall_stop(what.c_str(), true);
            run_to_syscall_stop(what.c_str(), false);
            result = static_cast<int64_t>(get_registers(tid_)[Registers::RAX]);
            if (!restarts(result) || result == kErestartRestartBlock || attempt == 100)
                break;
        }
    } catch (...) {
        set_registers(tid_, saved);
        if (injection_hook())
            injection_hook()(tid_, nullptr, 0);
        throw;
    }
    set_registers(tid_, saved);
    if (injection_hook())
        injection_hook()(tid_, nullptr, 0);
    return result;
}

int64_t ThreadInjector::call_with_output(long nr, int out_arg, std::vector<uint8_t>& out, uint64_t a0, uint64_t a1,
                                         uint64_t a2, uint64_t a3)
{
    Registers regs = get_registers(tid_);
    uint64_t scratch = (regs[Registers::RSP] - kBelowStack - out.size()) & ~uint64_t(15);
    TraceeMemory mem(tid_);
    std::vector<uint8_t> kept(out.size());
    if (!mem.read(RemoteAddr(scratch), kept))
        return -EFAULT;
    uint64_t args[4] = {a0, a1, a2, a3};
    args[out_arg] = scratch;
    int64_t result = call(nr, args[0], args[1], args[2], args[3]);
    if (!mem.read(RemoteAddr(scratch), out))
        result = -EFAULT;
    mem.write(RemoteAddr(scratch), kept);
    return result;
}

} // namespace rw
