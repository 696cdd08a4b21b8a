// If rewind dies while it records a process it attached to (SIGKILL, a
// crash), the kernel lets the threads go, but what the recording arranged
// in them stays: a thread the kernel side stalled (a SIGSTOP) leaves the
// process stopped, a thread in the middle of a call rewind injected has
// lost its registers, and the rdtsc trap, the patched vDSO, rewind's int3s
// and the unregistered rseq areas remain. The guardian is a process of its
// own (not rewind's child, in a session of its own, deaf to the terminal's
// signals) made before the attach; rewind tells it, through a pipe, what
// it changes. A clean end says "bye"; the pipe's end without it means
// rewind died, and the guardian seizes the process and puts it back.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

#include "event.h"

namespace rw {

class AttachGuardian {
public:
    // Starts the guardian of process `target`. Throws std::system_error.
    explicit AttachGuardian(pid_t target);
    // Dismisses it (the recording ended cleanly, or the attach was undone).
    ~AttachGuardian();
    AttachGuardian(const AttachGuardian&) = delete;
    AttachGuardian& operator=(const AttachGuardian&) = delete;

    // What it must undo, as rewind does it.
    void injecting(pid_t tid, const Registers& saved, uint64_t at); // a call is injected into `tid` at `at`
    void injected(pid_t tid);                                       // … and it is back as it was
    void rseq(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig);
    void personality(int64_t value);
    void int3(pid_t tgid, uint64_t addr, uint8_t replaced);
    void copy(pid_t pid); // the start image's copy, a child of the process to reap

private:
    void say(const std::string& line);
    int fd_ = -1;
};

// The guardian's side (in its own process): reads `fd` until its end and,
// unless told "bye", puts process `target` back. Never returns.
[[noreturn]] void run_guardian(int fd, pid_t target, pid_t recorder);

} // namespace rw
