// What a debugger needs from the replay engine while it waits for a task to
// reach its next event: the debugger's own traps (breakpoints, single
// steps, hardware breakpoints and watchpoints), the recorded signals about
// to be delivered, and forks (which copy memory, breakpoints included).
#pragma once

#include <csignal>
#include <cstdint>
#include <optional>

#include "event.h"

namespace rw::replay {

class Task;

class DebugHook {
public:
    virtual ~DebugHook() = default;

    enum class Then {
        NotMine, // not a debugger trap: the replay engine handles the stop
        Resume,  // continue towards the next event
        Step,    // continue by one instruction
    };
    // `task` stopped with SIGTRAP while the engine waited for it. May throw
    // to abandon the replay state (time travel restores a snapshot).
    virtual Then on_trap(Task& task, const siginfo_t& info) = 0;

    // The engine is about to deliver a recorded signal; `task` is at its
    // delivery stop, the signal not yet handed over.
    virtual void on_signal(Task& task, const SignalEvent& signal) = 0;

    // `task` has reached its next event's point, where nothing is delivered:
    // where the recording switched threads (a preempt event), or an rdrand/
    // rdseed that replay runs in the program's place (not yet run).
    virtual void on_event_point(Task& task) = 0;

    // `task` stopped because the debugger asked to interrupt it
    // (Replayer::interrupt_after); it resumes as before. May throw.
    virtual void on_interrupt(Task& task) = 0;

    // Replayer::step_through went on to event `index` without returning
    // (the one before it was served by seccomp notification): a stop from
    // here on is in the stretch before that event.
    virtual void on_event_passed(uint64_t index) = 0;

    // Around a fork of `task`'s process (a recorded fork, or a snapshot).
    virtual void before_fork(Task& task) = 0;
    // The byte under the debugger's int3 at `addr`, if it has one there
    // (the engine's own trap there is then that int3).
    virtual std::optional<uint8_t> byte_under_breakpoint(Task& task, uint64_t addr) = 0;
    // Whether the debugger has a trap on the code in [start, end) of
    // `task`'s process (an int3, a hardware breakpoint on execution), or
    // watches memory: the syscall agent would then miss or overwrite one
    // where it patches the code, or trap in the debugger's watchpoint
    // where it writes a call's output (syscall_agent.h).
    virtual bool traps_code(Task& task, uint64_t start, uint64_t end) = 0;
    virtual bool watches_memory() = 0;
    virtual void after_fork(Task& task) = 0;
};

} // namespace rw::replay
