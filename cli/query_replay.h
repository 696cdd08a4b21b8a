// What `rewind calls` and `rewind writes` share: the trace's replay served
// to a gdb driven through MI, moved to the program's end where every
// function and global has its address.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "gdb_launch.h"
#include "gdb_mi.h"
#include "process_choice.h"
#include "trace.h"

namespace rw::cli {

struct QueryArgs {
    std::vector<std::string> positional; // [TRACE] WHAT
    bool json = false;
    uint64_t most = 10000;
    std::string gdb = "/usr/bin/gdb";
    ProcessChoice process;
    void add_options(CLI::App* cmd, const std::string& what, bool with_most = true);
};

class QueryReplay {
public:
    explicit QueryReplay(const QueryArgs& args);
    const std::string& what() const { return what_; } // the function or lvalue asked about
    const Trace& trace() const { return trace_; }
    // Resolves what the user named (`resolve`) where the program starts,
    // else at its end (a library's function, a thread's variable), then
    // runs the query; a failure of the replay is reported as replay
    // reports it, bad input as a usage error.
    void run(const std::function<void(GdbMi&)>& resolve, const std::function<void(GdbMi&)>& query);
    double seconds() const;

private:
    std::string what_;
    Trace trace_;
    std::unique_ptr<GdbSupport> support_;
    std::unique_ptr<GdbMi> gdb_;
    std::chrono::steady_clock::time_point start_;
};

} // namespace rw::cli
