// The seccomp filter every recorded process runs under (installed by the
// launcher before the program's exec, inherited by whatever it starts):
//  - rseq fails with ENOSYS (glibc then does without), as under rr: the
//    kernel would write the current CPU into user memory on every return
//    to user mode, which replay cannot reproduce;
//  - every ptrace call of a 64-bit process, and every wait4 and waitid,
//    stop the thread at the call's entry, before it runs
//    (SECCOMP_RET_TRACE, reported to the recorder as PTRACE_EVENT_SECCOMP
//    with kPtraceCall or kWaitCall as its data). Every recorded process is
//    traced by the recorder already, so a recorded tracer's requests cannot
//    act on a recorded tracee: the recorder stands in for the kernel (a
//    tracer's requests, and the stops its waits report), and the call
//    itself runs only to fail without effect;
//  - ptrace through a 32-bit ABI stops the same way with kTracingRefused:
//    the recorder refuses it.
#pragma once

#include <cstdint>

namespace rw {

// SECCOMP_RET_DATA of the filter's stops (PTRACE_GETEVENTMSG).
inline constexpr uint16_t kTracingRefused = 0x7277;
inline constexpr uint16_t kPtraceCall = 0x7278;
inline constexpr uint16_t kWaitCall = 0x7279;

// Installs the filter in the calling process; false with errno set.
bool install_recording_filter();

} // namespace rw
