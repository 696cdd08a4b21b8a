// The signal state a program starts with: which signals are blocked and
// which are ignored. Both survive execve (handlers do not), and both shape
// what the program sees (rt_sigaction's old action, delivery), so a replay
// must start the program with exactly the state it was recorded with,
// whoever launches the replay (gdb, for one, ignores SIGINT in its children).
#pragma once

#include <cstdint>

namespace rw {

struct SignalState {
    uint64_t blocked = 0; // bit n-1 for signal n
    uint64_t ignored = 0; // bit n-1: disposition SIG_IGN

    // This process's state as it was when remember_initial_signal_state()
    // ran (early in main, before rewind changed anything), else as it is now.
    static SignalState initial();
    static SignalState current();
    // In a child about to execve: make the calling process's state this one.
    // Async-signal-safe. Returns 0, or an errno value.
    int apply() const;
};

void remember_initial_signal_state();

} // namespace rw
