// The init of a PID namespace (the process that is PID 1 there) never
// receives a signal whose action is the default one, apart from SIGKILL and
// SIGSTOP: the kernel drops it when it would be delivered. Under ptrace the
// tracer still sees it at a signal-delivery stop, and passing it on does
// nothing. A replay, whose processes are not namespace inits, must not be
// given it: it would act there.
#pragma once

#include <sys/types.h>

namespace rw {

// Whether `tid`'s process is the init of a PID namespace below the one it
// was created from (/proc/PID/status's NSpid ends in 1). It stays so for
// the process's life.
bool is_namespace_init(pid_t tid);

// Whether the kernel drops `signo` on its way to `tid`, the thread of a
// namespace init: the process has no handler for it and does not ignore it.
bool dropped_by_namespace_init(pid_t tid, int signo);

// Whether a fault (a signal the CPU raised: SIGSEGV, SIGBUS…) kills `tid`,
// the thread of a namespace init: it is not caught, or it is blocked or
// ignored (the kernel then makes its action the default one). Such a fault
// kills an init only if it is not traced: under ptrace the kernel keeps
// the init unkillable, drops the signal the tracer passes on, and the
// instruction faults again, for ever.
bool fault_kills_namespace_init(pid_t tid, int signo);

} // namespace rw
