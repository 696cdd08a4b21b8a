// Signals the replayed world raises by itself, which replay drops.
#pragma once

#include <sys/types.h>

namespace rw::replay {

// A signal the replayed world raises by itself (a real child's SIGCHLD, a
// terminal's SIGINT): the recording says which signals arrive and where, and
// rewind sends those itself; everything else is dropped.
bool is_stray_signal(pid_t tid, int signo);

} // namespace rw::replay
