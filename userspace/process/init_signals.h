// The init of a PID namespace (the process that is PID 1 there) never
// receives a signal whose action is the default one, apart from SIGKILL and
// SIGSTOP: the kernel drops it when it would be delivered. Under ptrace the
// tracer still sees it at a signal-delivery stop, and passing it on does
// nothing. A replay, whose processes are not namespace inits, must not be
// given it: it would act there.
#pragma once

#include <sys/types.h>

namespace rw {

// Whether the kernel will drop `signo` on its way to `tid` for that reason:
// `tid`'s process is the init of a PID namespace below the one it was
// created from (/proc/PID/status's NSpid ends in 1), and has no handler
// for the signal.
bool dropped_by_namespace_init(pid_t tid, int signo);

} // namespace rw
