// The perf sig_data tags that tell rewind's own hardware-breakpoint traps
// apart: the replay engine's, a position being sought, and the debugger's.
#pragma once

#include <cstdint>

namespace rw::replay {

inline constexpr uint64_t kTagEngine = 0x7277'0000'0000'0002;    // the engine finding a signal's position
inline constexpr uint64_t kTagTarget = 0x7277'0000'0000'0001;    // a position being sought
inline constexpr uint64_t kTagLabel = 0x7277'0000'0000'0004;     // looking for a snapshot's state
inline constexpr uint64_t kTagProbe = 0x7277'0000'0000'0003;     // where a probe starts counting
inline constexpr uint64_t kTagCountCap = 0x7277'0000'0000'0005;  // a probe's int3 counter ran too often
inline constexpr uint64_t kTagWriteCap = 0x7277'0000'0000'0008;  // a probe's write counter reached its cap
inline constexpr uint64_t kTagSlot = 0x7277'0000'0000'0006;      // a write to the stack slot a return reads
inline constexpr uint64_t kTagSample = 0x7277'0000'0000'0007;    // a sampling run's alarm (task clock)
inline constexpr uint64_t kTagCandidate = 0x7277'0000'0000'0100; // + index: an instruction that may come just before
inline constexpr uint64_t kTagUserBase = 0x7277'0000'0001'0000;  // + index of a debugger breakpoint

} // namespace rw::replay
