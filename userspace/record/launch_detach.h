// The end of the recording of a program rewind started, with
// --detach-after: its processes run on unrecorded, as they would have run
// without rewind from then on. Such a program is started without the
// recording filter (a seccomp filter cannot be taken back, and without a
// tracer its answers would fail the program's wait4 calls), as an attached
// process is recorded.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rw {

// Takes back, in the stopped threads `tids` (ptrace-stopped, out of any
// syscall), what the launch arranged: the rdtsc trap of every thread, the
// vDSO's time calls turned into syscalls and the personality without
// address randomization of every process. (detach_all takes out rewind's
// int3s.) Returns what could not be taken back.
std::vector<std::string> undo_launch(const std::vector<pid_t>& tids);

// Waits for the program rewind started and has detached from (its child,
// no longer traced) to end, and returns its wait status. SIGTERM and
// SIGHUP sent to rewind meanwhile go on to it, as while it was recorded.
int wait_for_program(pid_t pid);

} // namespace rw
