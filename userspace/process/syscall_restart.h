// The kernel's "run this syscall again" results (include/linux/errno.h, not
// in the user headers). A tracer sees one at the exit stop of a call that a
// signal interrupted before it did anything; unless a handler runs first,
// the kernel then runs the call again.
#pragma once

#include <cstdint>

namespace rw {

constexpr int64_t kErestartSys = -512, kErestartNoIntr = -513, kErestartNoHand = -514, kErestartRestartBlock = -516;

constexpr bool restarts(int64_t ret)
{
    return ret == kErestartSys || ret == kErestartNoIntr || ret == kErestartNoHand || ret == kErestartRestartBlock;
}

} // namespace rw
