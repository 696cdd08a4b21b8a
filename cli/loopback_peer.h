// Who is at the other end of a TCP connection on the loopback interface.
// A replay server exposes the recorded program's memory and the trace's
// files, so `rewind serve --port` accepts only its own user (and root):
// the kernel's socket table names the owner of the connecting socket.
#pragma once

#include <sys/types.h>

#include <optional>

namespace rw::cli {

// The uid owning the peer socket of `conn` (an accepted IPv4 loopback
// connection), from /proc/net/tcp; nullopt if it cannot be found.
std::optional<uid_t> loopback_peer_uid(int conn);

} // namespace rw::cli
