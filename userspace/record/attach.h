// Attaching to a process rewind did not start (rewind record --pid), and
// leaving it as it was. Every thread is seized and stopped; a thread that
// was inside a syscall is put back before the instruction that made it (it
// makes the call again when it runs, as the kernel restarts an interrupted
// call), so the start image has no thread inside the kernel. Then what a
// launched recording arranges before its program's first instruction is
// arranged in the live process, and undone at detach: the rdtsc trap in
// every thread, the vDSO's time calls turned into syscalls, rseq
// unregistered, and no address randomization for the execs it makes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "attach_guardian.h"
#include "event.h"

namespace rw {

struct AttachedThread {
    pid_t tid = 0;
    Registers regs; // where it stands at the attach point
    uint64_t clear_child_tid = 0;
    // Its rseq registration, undone while it is recorded.
    uint64_t rseq_addr = 0;
    uint32_t rseq_len = 0;
    uint32_t rseq_sig = 0;
    int tsc_mode = 0; // PR_GET_TSC's, put back at detach
    // The call it was in, which it continues with restart_syscall (its
    // outputs are that call's), or -1.
    int restarted_call = -1;
};

// Where the threads of the process stand for a start image: the attach, or
// a later point of the recording (the flight recorder's, record --window).
struct ImagePoint {
    pid_t pid = 0;
    std::vector<AttachedThread> threads; // the leader (or the first thread) first
    uint64_t syscall_insn = 0;
};

// Puts a ptrace-stopped thread that is inside a syscall (stopped at its
// entry, at its exit, or interrupted in it) back before the instruction
// that made it, out of the kernel, to make the call again when it runs;
// `restarted_call`, if given, is set to the call a restart_syscall there
// continues, or -1. Returns false if the thread is gone.
bool put_before_syscall(pid_t tid, int* restarted_call = nullptr);

// Why rewind may not attach to `pid` (a missing right, a tracer already
// there, a process that is gone or stopped), or "".
std::string attach_refusal(pid_t pid);

class Attachment {
public:
    // Seizes every thread of `pid` with `ptrace_options` and stops it.
    // Throws UsageError (exit status 1) saying why it cannot.
    Attachment(pid_t pid, long ptrace_options);
    // Without release(): everything undone and every thread let go, as if
    // rewind had never come (an attach that failed half-way).
    ~Attachment();
    Attachment(const Attachment&) = delete;
    Attachment& operator=(const Attachment&) = delete;

    pid_t pid() const { return pid_; }
    // The leader first (or the first thread, if the leader has exited).
    const std::vector<AttachedThread>& threads() const { return threads_; }
    uint64_t syscall_insn() const { return insn_; }

    // A thread's rseq registration made while recorded and answered as
    // made (Supervisor::owe_rseq): registered for real at the detach.
    void rseq_registered(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig);
    // Arranges the process for recording (see above). Throws std::runtime_error.
    void prepare();
    // The attach point: every thread as seized.
    ImagePoint image_point() const { return {pid_, threads_, insn_}; }
    // A later point of the recording: `stopped` lists every thread of the
    // process, ptrace-stopped outside any syscall by the recording, with
    // the call a restart_syscall continues (or -1). A copy made earlier is
    // reaped first. Throws std::runtime_error.
    ImagePoint point_now(const std::vector<std::pair<pid_t, int>>& stopped);
    // A copy of the process at `at` made by a fork injected in its first
    // thread, stopped, with no descriptors and its shared mappings made
    // private: what the start image is taken of. Throws std::runtime_error.
    pid_t fork_copy(const ImagePoint& at);
    // Signals that reached threads while calls were injected since the
    // last call: (tid, signal), to be sent again.
    std::vector<std::pair<pid_t, int>> take_held_signals() { return std::exchange(held_, {}); }
    // Lets the copy go untraced, asleep in pause(), for CRIU to dump: never
    // stopped by a signal, so the process (its parent) is told nothing.
    void park_copy(pid_t copy);
    // Kills the copy (if CRIU has not). The process (its parent, which is
    // never told: no exit signal) reaps it by a wait of rewind's: at once
    // while rewind holds the process, else at the detach (undo).
    void discard_copy(pid_t copy);

    // Signals that reached threads while they were held: (tid, signal),
    // to be sent again once the recording runs.
    const std::vector<std::pair<pid_t, int>>& held_signals() const { return held_; }
    // How long the process has been stopped so far.
    std::chrono::duration<double> paused() const { return std::chrono::steady_clock::now() - stopped_at_; }

    // The recording owns the threads from now on (the destructor leaves them).
    void release() { released_ = true; }
    // Undoes prepare() in these threads of the process, all ptrace-stopped
    // outside any syscall (the ones made since the attach too). Returns the
    // problems met, one line each.
    std::vector<std::string> undo(const std::vector<pid_t>& tids);
    // Puts the process back if rewind dies (attach_guardian.h).
    AttachGuardian& guardian() { return *guardian_; }

private:
    void seize_all(long ptrace_options);
    void wait_stopped(pid_t tid, std::vector<pid_t>& more);
    void step_out_of_vdso(AttachedThread& t);
    void hold(pid_t tid, int sig) { held_.push_back({tid, sig}); }
    void privatize_shared_mappings(pid_t copy, uint64_t insn);
    void reap_copy(pid_t tid); // by a wait4 injected into `tid`, of the process

    pid_t pid_;
    std::unique_ptr<AttachGuardian> guardian_;
    std::vector<AttachedThread> threads_;
    std::vector<std::pair<pid_t, int>> held_;
    uint64_t insn_ = 0;
    uint64_t vdso_start_ = 0, vdso_end_ = 0;
    std::vector<uint8_t> vdso_bytes_;
    int64_t personality_ = -1;
    pid_t copy_ = 0; // a copy left for the process to reap
    bool prepared_ = false;
    bool released_ = false;
    std::chrono::steady_clock::time_point stopped_at_;
};

} // namespace rw
