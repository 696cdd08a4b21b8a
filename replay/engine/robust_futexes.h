// What the kernel does to a dying thread's robust futexes (its robust
// list, set with set_robust_list): each one the thread still owns gets
// FUTEX_OWNER_DIED, so the next locker gets EOWNERDEAD. The kernel knows a
// futex is the thread's by its tid in the futex word; in replay the words
// hold the recorded tids (the program learned its tid from the trace), so
// the kernel would leave them. The replayer does it for the recorded tid.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "event.h"
#include "tracee.h"

namespace rw::replay {

// Marks the robust futexes that thread `tid` (real) owns under the tid
// `owner` (recorded), as the kernel's exit would. Returns how many.
int release_robust_futexes(pid_t tid, Tid owner, const TraceeMemory& memory);

} // namespace rw::replay
