// Starting gdb on a replay: rewind's gdb commands, a sysroot of the
// trace's file copies (so symbols always match the recorded code and gdb
// reads them locally), and the replay server on a pipe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace rw {
class Trace;
}

namespace rw::cli {

// Runs gdb on the trace's replay; returns the exit status to pass on.
int run_gdb(const std::string& gdb, const Trace& trace, const std::vector<std::string>& gdb_args);

} // namespace rw::cli
