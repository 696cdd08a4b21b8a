// What the kernel keeps for one thread beyond its general registers, and
// that a snapshot must carry to re-create the thread: fork copies only the
// thread that calls it, so the others are made again with clone and given
// back their own state.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <vector>

namespace rw::replay {

struct ThreadState {
    std::vector<uint8_t> xstate; // x87, SSE, AVX… (the XSAVE area)
    uint64_t sigmask = 0;        // blocked signals
    uint64_t robust_head = 0;    // set_robust_list
    uint64_t robust_len = 0;
};

// Reads the state of a ptrace-stopped thread. Throws std::system_error.
ThreadState read_thread_state(pid_t tid);
// Gives a ptrace-stopped thread the extended registers and signal mask of
// `state` (the robust list is the thread's own call: Replayer injects it).
void write_thread_state(pid_t tid, const ThreadState& state);

} // namespace rw::replay
