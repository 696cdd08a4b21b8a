// Runs syscalls of rewind's choosing in a thread of a process rewind did
// not start (rewind record --pid): the thread is ptrace-stopped in user
// code, not inside a syscall of its own, and comes back exactly as it was.
// Used while attaching and detaching, when no capture watches the process,
// and for the few calls the recorder makes on a program's behalf.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "event.h"

namespace rw {

// The address of a `syscall` instruction in an executable mapping of
// process `pid` (the vDSO's first), or 0 if none can be read.
uint64_t find_syscall_instruction(pid_t pid);

// Told before every injected call (with the registers the thread gets back
// and the address of the syscall instruction it runs) and after it
// (nullptr), also when it failed: rewind's attach guardian keeps them, to
// put a thread back if rewind dies in the middle of one.
using InjectionHook = std::function<void(pid_t tid, const Registers* saved, uint64_t at)>;
void set_injection_hook(InjectionHook hook);

class ThreadInjector {
public:
    // `syscall_insn`: from find_syscall_instruction for the thread's process.
    ThreadInjector(pid_t tid, uint64_t syscall_insn) : tid_(tid), insn_(syscall_insn) {}

    // The raw result (-errno on failure). Throws std::runtime_error if the
    // thread dies or stops in a way an injected call cannot go on from.
    // Signals that reach the thread meanwhile are held back (not
    // delivered) and listed in arrived().
    int64_t call(long nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                 uint64_t a5 = 0);
    // A call that writes `out_bytes` into memory it is given: the bytes go
    // below the thread's stack (clear of the red zone) and are put back.
    // Returns the raw result; `out` receives what the call wrote.
    int64_t call_with_output(long nr, int out_arg, std::vector<uint8_t>& out, uint64_t a0 = 0, uint64_t a1 = 0,
                             uint64_t a2 = 0, uint64_t a3 = 0);

    const std::vector<int>& arrived() const { return arrived_; }

private:
    // To the call's entry stop (`entry`) or its exit stop.
    void run_to_syscall_stop(const char* what, bool entry);
    pid_t tid_;
    uint64_t insn_;
    uint64_t own_rip_ = 0; // where the thread stands, which the call is injected before
    std::vector<int> arrived_;
};

} // namespace rw
