// Where a thread of a parallel trace is inside a synchronization call
// (replay_sync.cpp): part of the replay's state, and of its snapshots.
#pragma once

#include <cstdint>
#include <optional>

#include "event.h"

namespace rw::replay {

struct SyncCallState {
    static constexpr int64_t kNotReturned = INT64_MIN;
    uint32_t fn = 0;
    uint64_t entry = 0, return_to = 0;
    bool in_syscall = false;          // between a futex's entry and exit stops
    bool blocked = false;             // asleep in that futex
    uint64_t futex_addr = 0;          // of the last futex it entered
    uint64_t object = 0;              // the call's first argument
    uint64_t mutex = 0;               // a condition wait's mutex
    bool deferred = false;            // stopped at its entry, to run later (completes_round_later)
    bool timed_out = false;           // its wait was ended as the recording's timed out
    int64_t ret = kNotReturned;       // what it returned, once it has
    std::optional<SyncEvent> pending; // its event, when the call blocked before it was checked
};

// Whether a futex operation (its second argument) is a wait, timed or not.
inline bool futex_op_waits(uint64_t op)
{
    constexpr uint64_t kCmdMask = ~uint64_t(128 | 256); // FUTEX_PRIVATE_FLAG, FUTEX_CLOCK_REALTIME
    uint64_t cmd = op & kCmdMask;
    return cmd == 0 /* FUTEX_WAIT */ || cmd == 9 /* FUTEX_WAIT_BITSET */;
}

} // namespace rw::replay
