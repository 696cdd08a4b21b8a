// Access to a stopped tracee: its memory and registers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "event.h"

namespace rw {

// An address in a tracee's address space: never to be dereferenced here.
struct RemoteAddr {
    uint64_t value = 0;
    constexpr RemoteAddr() = default;
    constexpr explicit RemoteAddr(uint64_t v) : value(v) {}
    constexpr RemoteAddr operator+(uint64_t off) const { return RemoteAddr(value + off); }
    constexpr bool operator==(const RemoteAddr&) const = default;
    constexpr explicit operator bool() const { return value != 0; }
};

class TraceeMemory {
public:
    explicit TraceeMemory(pid_t tid) : tid_(tid) {}

    // Reads all of `out` or returns false. Falls back to /proc/PID/mem, which
    // reaches pages process_vm_readv cannot.
    bool read(RemoteAddr addr, std::span<uint8_t> out) const;
    // Reads as much as is readable from the start; returns the count.
    size_t read_partial(RemoteAddr addr, std::span<uint8_t> out) const;
    std::optional<std::string> read_string(RemoteAddr addr, size_t max) const;
    template <typename T> std::optional<T> read_value(RemoteAddr addr) const
    {
        T v;
        if (!read(addr, {reinterpret_cast<uint8_t*>(&v), sizeof(T)}))
            return std::nullopt;
        return v;
    }
    // Writes with process_vm_writev, or through /proc/PID/mem (which also
    // reaches read-only pages, like ptrace) where that fails.
    bool write(RemoteAddr addr, std::span<const uint8_t> data) const;
    // The same, for the program's code (a breakpoint's int3): its pages are
    // read-only, so /proc/PID/mem at once, through a file kept open per
    // task until forget_code_file. Only for a tracer that calls it (replay's
    // stop waiter does, at every exec and end).
    bool write_code(RemoteAddr addr, std::span<const uint8_t> data) const;

    pid_t tid() const { return tid_; }

private:
    pid_t tid_;
};

// Closes the file write_code keeps for `tid`: its task execed (the file
// would still reach the old address space) or ended.
void forget_code_file(pid_t tid);

// ptrace register and signal access; these throw std::system_error.
Registers get_registers(pid_t tid);
void set_registers(pid_t tid, const Registers& regs);
siginfo_t get_siginfo(pid_t tid);
void set_siginfo(pid_t tid, const siginfo_t& info);
unsigned long get_event_msg(pid_t tid);
// Whether the thread is in a ptrace stop (ptrace requests on it succeed).
bool in_ptrace_stop(pid_t tid);
// Waits up to `limit` for tracee `tid`'s next stop: true if it stopped,
// false if it ended, is not this process's tracee, or did not stop in time.
bool stops_within(pid_t tid, std::chrono::milliseconds limit);
// The thread's scheduler state as /proc shows it ('R', 'S', 't', 'Z'…;
// 0 if it is gone).
char thread_state(pid_t tid);

// A thread's blocked signals (PTRACE_GETSIGMASK, one bit per signal:
// signal_bit), or nothing where they cannot be read (the thread is gone).
std::optional<uint64_t> get_sigmask(pid_t tid);
bool set_sigmask(pid_t tid, uint64_t mask);
constexpr uint64_t signal_bit(int signo)
{
    return uint64_t(1) << (signo - 1);
}
// The signals whose default action stops the process (a group stop).
constexpr bool is_stop_signal(int signo)
{
    return signo == SIGSTOP || signo == SIGTSTP || signo == SIGTTIN || signo == SIGTTOU;
}
// A hardware breakpoint's SIGTRAP comes from perf and is not forced: in a
// thread that blocks SIGTRAP (xz's workers block every signal) it stays
// pending, and the breakpoint traps into the kernel at every execution of a
// hot instruction with nobody told (measured: xz -T2 recorded 40 times
// slower). A single step's SIGTRAP is forced, and unblocks it.
bool blocks_sigtrap(pid_t tid);
// syscall, sysenter or int 0x80 at rip; true where the code cannot be read.
bool is_syscall_instruction(pid_t tid, uint64_t rip);

// The wait-status of a stop, decoded.
struct StopInfo {
    enum class Kind { Exited, Signaled, SignalDelivery, SyscallStop, PtraceEvent, GroupStop };
    Kind kind;
    int signal = 0;    // stop signal / terminating signal
    int event = 0;     // PTRACE_EVENT_* for PtraceEvent
    int exit_code = 0; // for Exited
    int raw = 0;
};
StopInfo decode_wait_status(int status);

// The sig_data of a perf event's SIGTRAP (si_code TRAP_PERF); the C
// library's siginfo_t predates the field.
uint64_t perf_data(const siginfo_t& info);
inline constexpr int kTrapPerf = 6;  // si_code of a perf event's SIGTRAP
inline constexpr int kTrapTrace = 2; // si_code of a single step's SIGTRAP

// EFLAGS.RF: the CPU sets it or not around breakpoint stops, so two states
// of one execution may differ in it alone.
inline constexpr uint64_t kResumeFlag = 0x10000;
inline constexpr uint64_t kTrapFlag = 0x100; // single-step
// Equal registers, but for the resume flag.
bool same_registers(const Registers& a, const Registers& b);

} // namespace rw
