// The seccomp filter every recorded process runs under (installed by the
// launcher before the program's exec, inherited by whatever it starts):
//  - rseq fails with ENOSYS (glibc then does without), as under rr: the
//    kernel would write the current CPU into user memory on every return
//    to user mode, which replay cannot reproduce;
//  - the ptrace requests that make a recorded process a tracer
//    (PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE) stop the thread at the
//    call's entry, before it runs (SECCOMP_RET_TRACE, reported to the
//    recorder as PTRACE_EVENT_SECCOMP with kTracingRefused as its data).
//    Every recorded process is traced by the recorder already: the call
//    would fail, or a stop the program waits for would never reach it.
//    The recorder refuses such a program there, saying so.
// The other ptrace requests act on a tracee of the caller's, which a
// recorded process never has: they fail with ESRCH, as they do natively
// for a process that traces nothing, and run unhindered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rw {

// SECCOMP_RET_DATA of the filter's ptrace stops (PTRACE_GETEVENTMSG).
inline constexpr uint16_t kTracingRefused = 0x7277;

// Installs the filter in the calling process; false with errno set.
bool install_recording_filter();

// "PTRACE_TRACEME", "PTRACE_ATTACH", "PTRACE_SEIZE" for the requests the
// filter stops; nothing for the others.
std::optional<std::string> tracing_request_name(uint64_t request);

} // namespace rw
