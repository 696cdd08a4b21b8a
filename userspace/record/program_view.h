// What a recorded program would see without rewind, where its own calls
// would show the recorder: the rdtsc trap (prctl(PR_GET_TSC)) and the
// recording's seccomp filter (prctl(PR_GET_SECCOMP)). The kernel side stops
// such a call at its return (RW_STALL_VIEW); the program gets this answer,
// and the trace holds it, so replay gives the same.
#pragma once

#include <sys/types.h>

#include "rewind_abi.h"

namespace rw {

// Changes the returning call `sc` of thread `tid` (its result register and
// the memory it wrote) to the program's own view; `sc.ret` follows.
// Returns false, with nothing changed, if that view cannot be had.
bool give_program_view(pid_t tid, rw_rec_syscall& sc);

} // namespace rw
