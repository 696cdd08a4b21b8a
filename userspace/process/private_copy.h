// Memory a stopped copy of a process shares (a file mapped MAP_SHARED,
// shared anonymous memory, a System V segment) made its own: replaced by
// private anonymous memory with the same content and protection, so that
// an image of the copy (CRIU) neither holds the shared object nor brings
// it back, and writing into the restored copy reaches nothing else.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "event.h"

namespace rw {

// `copy` is ptrace-stopped outside any syscall; `syscall_insn` a syscall
// instruction of it. Throws std::runtime_error.
void make_private(pid_t copy, uint64_t syscall_insn, const Mapping& mapping);

} // namespace rw
