// With REWIND_DEBUG set in the environment, rewind says on stderr what it
// is doing and what it costs (each move in time of a debugging session,
// how replay serves syscalls), each line stamped with the time since the
// first.
#pragma once

namespace rw {

void debug_log(const char* format, ...) __attribute__((format(printf, 1, 2)));

} // namespace rw
