// Syscalls that wait with a signal mask of their own (pselect6, ppoll,
// epoll_pwait, epoll_pwait2, rt_sigsuspend). When a signal interrupts one,
// the kernel delivers it under that mask, runs the handler with it, and the
// signal frame saves the thread's own mask for rt_sigreturn to restore.
// An emulated wait never installs the mask, so the replay does it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>

#include "event.h"
#include "tracee.h"

namespace rw::replay {

// The mask the syscall at a syscall-exit stop waited with, if it has one
// and returned interrupted (only then does the kernel keep it for the
// signal's delivery).
std::optional<uint64_t> mask_of_interrupted_wait(const Registers& at_exit, TraceeMemory memory);

uint64_t thread_sigmask(pid_t tid);
void set_thread_sigmask(pid_t tid, uint64_t mask);

// Whether the thread's process has a handler for the signal (/proc SigCgt).
bool has_handler(pid_t tid, int signo);
// Whether it ignores the signal (/proc SigIgn).
bool is_ignored(pid_t tid, int signo);

// Where the frame of a signal just delivered keeps the mask rt_sigreturn
// restores (uc_sigmask in the rt_sigframe at the handler's stack pointer).
uint64_t frame_sigmask_address(const Registers& at_handler_entry);

} // namespace rw::replay
