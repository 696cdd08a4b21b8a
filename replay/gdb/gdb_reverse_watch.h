// `monitor reverse-watch EXPR`: rewind watch runs against this same replay
// (a second gdb, on a loopback connection this server accepts), searches
// for the point where EXPR took its current value, and leaves the replay
// there; the debugger that asked continues from that point.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "gdb_connection.h"
#include "gdb_host_files.h"
#include "unique_fd.h"

namespace rw {
class Trace;
}

namespace rw::replay {

class DebugSession;
class GdbServer;

class ReverseWatch {
public:
    // Starts `rewind watch` for EXPR from position `at`; throws when it cannot.
    ReverseWatch(DebugSession& session, const std::string& expr, const std::string& at);
    ~ReverseWatch();
    // The frontend that serves rewind watch's gdb.
    GdbServer& server() { return *server_; }
    // Waits for rewind watch to end; what it printed.
    std::string finish();

private:
    pid_t child_ = -1;
    UniqueFd output_;
    UniqueFd connection_fd_;
    std::unique_ptr<GdbConnection> connection_;
    std::unique_ptr<HostFiles> files_;
    std::unique_ptr<GdbServer> server_;
};

} // namespace rw::replay
