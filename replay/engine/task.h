// The replayed world: tasks (threads), the thread groups (processes) they
// belong to, and the address spaces they run in. Kept apart because threads
// share an address space, and fork copies one.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <vector>

#include "event.h"
#include "stdio_fds.h"
#include "tracee.h"

namespace rw::replay {

class Task;
class SyscallAgent;

struct AddressSpace {
    int id = 0;
    std::vector<Task*> tasks;
    uint64_t syscall_insn = 0;     // address of a `syscall` instruction, for injected syscalls
    bool keeps_from_forks = false; // a madvise kept some of it out of fork children (fork_advice.h)
    std::shared_ptr<SyscallAgent> agent; // mapped in it (syscall_agent.h)
    bool agent_tried = false;
};

struct ThreadGroup {
    Tid recorded_tgid = 0;
    pid_t tgid = 0;
    std::shared_ptr<StdioFds> fds; // shared with CLONE_FILES children
    std::vector<Task*> tasks;
    // The replay sent it SIGKILL, as something outside it did in the
    // recording: its threads die with it, and what the recording still
    // shows of them before their exits (a new thread's return from clone)
    // is the kernel reporting threads that were already dying.
    bool killed = false;
};

// How a task is resumed: the replayer always knows what the task's next
// event is, so it picks the mode that stops the task there.
enum class Resume {
    Emulate, // PTRACE_SYSEMU: the next syscall stops at entry and is not run
    Syscall, // PTRACE_SYSCALL: syscalls stop at entry and exit and do run
    Cont,    // PTRACE_CONT
    // PTRACE_CONT under the replay's seccomp filter: a served syscall
    // stops the thread in its notification (syscall_notifier.h), not in a
    // ptrace stop; only the thread's own code runs until then.
    Notified,
};

class Task {
public:
    Task(pid_t tid, Tid recorded_tid, std::shared_ptr<ThreadGroup> group, std::shared_ptr<AddressSpace> vm);

    pid_t tid() const { return tid_; }
    Tid recorded_tid() const { return recorded_tid_; }
    ThreadGroup& group() const { return *group_; }
    // Its descriptor table (what leads to the user's stdin/stdout/stderr):
    // its process's, unless it has one of its own (unshare(CLONE_FILES),
    // or a thread created without CLONE_FILES).
    StdioFds& fds() const { return own_fds ? *own_fds : *group_->fds; }
    const std::shared_ptr<StdioFds>& fds_ptr() const { return own_fds ? own_fds : group_->fds; }
    std::shared_ptr<StdioFds> own_fds;
    const std::shared_ptr<ThreadGroup>& group_ptr() const { return group_; }
    const std::shared_ptr<AddressSpace>& vm() const { return vm_; }
    TraceeMemory memory() const { return TraceeMemory(tid_); }
    // A thread that execs from outside the lead of its process takes the
    // leader's id (the kernel's and the recording's).
    void take_leader_id(pid_t tid, Tid recorded_tid);
    // An exec gives the process an address space of its own.
    void move_to(std::shared_ptr<AddressSpace> vm);

    // Registers, read once per stop.
    const Registers& regs();
    void set_regs(const Registers& regs);

    // Use Replayer::resume, which knows the stops a mode switch adds.
    // With `step`, the task stops after one instruction (an emulated
    // syscall still stops at its entry).
    void resume(Resume how, bool step = false);
    // At a stop after a resume into the thread's own code while it blocked
    // SIGTRAP: blocked again. The kernel unblocks a SIGTRAP it forces (an
    // int3, a single step), and resume() lets it through for breakpoints;
    // the program's own mask must not change because replay or a debugger
    // trapped it (its next rt_sigprocmask would show it).
    void reblock_sigtrap();
    // Replay set the thread's signal mask itself (PTRACE_SETSIGMASK).
    void mask_changed() { known_mask_.reset(); }
    // Resumes a thread the replay stopped for a moment of its own (an
    // interrupt), with nothing else changed: to its next syscall stop.
    void resume_untouched();
    // A signal handed to the task at its next resume (a delivery stop's signal).
    int inject_signal = 0;

    // Where the task is stopped, for the handlers that continue it.
    enum class At {
        Running,       // resumed; its next stop is pending
        Fresh,         // a new task whose first stop is still to be collected
        SyscallEntry,  // entry stop (or SYSEMU stop) of the current syscall
        SyscallExit,   // exit stop
        ExecutingCall, // inside a syscall that runs for real (clone, execve): exit pending
        SignalStop,    // signal-delivery stop
        EventStop,     // ptrace event stop
        Gone,          // exited
    };
    At at = At::Fresh;
    Resume last_resume = Resume::Cont;
    bool last_resume_stepped = false; // an interrupt of a single step resumes it as a step
    // Stopped at a PTRACE_SYSEMU entry: resuming with PTRACE_SYSCALL from
    // here first reports the skipped syscall's exit.
    bool emulated_entry = false;
    uint64_t last_syscall_seq = 0;        // the last syscall event replayed for this task
    Tid vfork_child = 0;                  // a vfork child that must exec or exit before this task returns
    uint64_t child_settid = 0;            // where its creator's clone asked for its id (CLONE_CHILD_SETTID)
    Tid child_settid_value = 0;           // the id the kernel stored there (in the new task's PID namespace)
    uint64_t clear_child_tid = 0;         // zeroed and woken by the kernel when it exits (set_tid_address)
    bool alt_stack = false;               // it has set an alternate signal stack (sigaltstack)
    bool step_on_resume = false;          // a debugger asked for one instruction
    bool single_stepping = false;         // every resume is a single step (a debugger counts instructions)
    std::optional<StopInfo> final_status; // how it ended, once it has
    // Serving syscalls by notification (replay_notified.cpp):
    bool stop_pending = false;       // running; its next stop has come or is coming
    bool interrupt_stop_due = false; // a PTRACE_INTERRUPT's stop is still to come
    std::optional<bool> filtered;    // runs under the replay's filter

    // Stopped by the replay between calls of its own: not inside a call
    // that runs for real (a clone stopped at its fork event would finish
    // under whatever was injected), with no signal to hand over at its
    // next resume. A syscall can be injected into it, a call of its run early.
    bool idle_at_stop() const
    {
        return at != At::Running && at != At::Fresh && at != At::ExecutingCall && at != At::Gone && !inject_signal;
    }

private:
    pid_t tid_;
    Tid recorded_tid_;
    std::shared_ptr<ThreadGroup> group_;
    std::shared_ptr<AddressSpace> vm_;
    std::optional<Registers> regs_;
    // The program's mask, with SIGTRAP blocked, while resume() lets SIGTRAP through.
    std::optional<uint64_t> mask_to_restore_;
    // The program's mask as read at the last resume into its own code only.
    std::optional<uint64_t> known_mask_;
};

} // namespace rw::replay
