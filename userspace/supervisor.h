// The ptrace half of recording. The program runs under PTRACE_CONT (no
// per-syscall stops); the supervisor only sees what eBPF cannot capture:
// signals, rdtsc traps, exec, new tasks, and stalls the kernel side hands
// over.
//
// Asynchronous signals are delivered only at syscall boundaries, so replay
// can deliver them at the same point:
//  - one that arrives while the thread is leaving a syscall (orig_rax >= 0 at
//    the delivery stop) is delivered at once, anchored to that syscall;
//  - one that interrupts user code is suppressed and the thread resumed with
//    PTRACE_SYSCALL; at its next syscall entry the signal is re-sent, and
//    delivered when that syscall exits;
//  - a thread that makes no syscall within the fallback delay is
//    interrupted and the signal delivered where it stands; the event then
//    records the full register state of that point (SignalKind::AtPosition).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "event.h"
#include "rewind_abi.h"

namespace rw {

class BpfCapture;
class EventAssembler;
class EventSink;
class FileStore;
class MappedFiles;

class Supervisor {
public:
    struct Options {
        std::chrono::milliseconds signal_fallback{10};
        std::chrono::milliseconds flush_interval{250};
    };

    Supervisor(BpfCapture& capture, EventAssembler& assembler, EventSink& sink, MappedFiles& files,
               const Options& options);

    // Runs until no traced task is left; returns the wait status of `initial`.
    int run(pid_t initial, const std::function<void()>& periodic);

    const std::vector<std::string>& problems() const { return problems_; }
    uint64_t stalls() const { return stalls_; }
    uint64_t rdtsc_traps() const { return rdtsc_traps_; }
    uint64_t deferred_signals() const { return deferred_signals_; }

private:
    struct Thread {
        Tid tid = 0;
        Tid tgid = 0;
        bool syscall_stops = false;      // resumed with PTRACE_SYSCALL
        std::vector<siginfo_t> deferred; // waiting for a syscall boundary
        std::vector<siginfo_t> resent;   // re-sent, awaiting delivery
        bool at_position = false;        // delivery falls back to a user position
        Registers position;              // … this one
        std::chrono::steady_clock::time_point deadline{};
        bool interrupt_requested = false;
    };

    Thread& thread(Tid tid);
    void on_stop(pid_t tid, int status);
    void on_ptrace_event(Thread& t, int event);
    void on_event_stop(Thread& t, int signal);
    void on_syscall_stop(Thread& t);
    void on_signal(Thread& t, int signo);
    void on_stall(Thread& t, const rw_stall& stall);
    void on_exec(Thread& t);
    bool emulate_tsc(Thread& t);
    void resend_deferred(Thread& t);
    void record_signal(Thread& t, const siginfo_t& info, SignalKind kind, const Registers& regs);
    void resume(Thread& t, int signo);
    void check_deadlines();
    void emit(Event event);
    void problem(std::string message, Tid tid);

    BpfCapture& capture_;
    EventAssembler& assembler_;
    EventSink& sink_;
    MappedFiles& files_;
    Options options_;
    std::map<Tid, Thread> threads_;
    pid_t initial_ = -1;
    int initial_status_ = 0;
    std::vector<std::string> problems_;
    uint64_t stalls_ = 0;
    uint64_t rdtsc_traps_ = 0;
    uint64_t deferred_signals_ = 0;
    uint64_t refusals_seen_ = 0;
};

} // namespace rw
