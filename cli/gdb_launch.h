// Starting gdb on a replay: rewind's gdb commands, a sysroot of the
// trace's file copies (so symbols always match the recorded code and gdb
// reads them locally), and the replay server on a pipe.
#pragma once

#include <exception>
#include <filesystem>
#include <string>
#include <vector>

namespace rw {
class Trace;
}

namespace rw::cli {

// What gdb needs to debug a replay, in a private temporary directory that
// goes with this object: rewind's gdb commands and a sysroot of links to
// the trace's copies of the program and its libraries.
class GdbSupport {
public:
    // `serve_options` go to the replay server (e.g. --pid N).
    explicit GdbSupport(const Trace& trace, std::vector<std::string> serve_options = {});
    ~GdbSupport();
    GdbSupport(const GdbSupport&) = delete;
    GdbSupport& operator=(const GdbSupport&) = delete;

    std::string init_script() const { return (dir_ / "rewind-gdbinit.py").string(); }
    std::string sysroot() const { return (dir_ / "sysroot").string(); }
    // The server writes its long tool replies into the private directory
    // (rewind serve --reply-dir), where they go with this object.
    void take_long_replies_in_files() { serve_options_.insert(serve_options_.end(), {"--reply-dir", dir_.string()}); }
    // The gdb command that connects to a replay server of the trace.
    std::string target_command() const;
    // Why the server of target_command() ended, if it failed (empty if not):
    // gdb shows the server's last words only while the connection lasts.
    std::string server_error() const;
    // The server's exit status for that failure (90 to 93), or 0.
    int server_status() const;

private:
    std::filesystem::path dir_;
    std::filesystem::path trace_dir_;
    std::vector<std::string> serve_options_;
};

// From a catch block of a tool that drove gdb on `support`'s server: where
// the replay failed, the failure is the server's, with replay's exit status
// (90-93); otherwise the exception caught is thrown again.
[[noreturn]] void rethrow_with_server_error(const GdbSupport& support, const std::exception& e);

// Fails with a clear message when `gdb` cannot be run.
void check_gdb(const std::string& gdb);

// Runs gdb on the trace's replay; returns the exit status to pass on.
int run_gdb(const std::string& gdb, const Trace& trace, const std::vector<std::string>& gdb_args,
            const std::vector<std::string>& serve_options = {});

} // namespace rw::cli
