// --pid PID / --exec NAME: which recorded process a debugger looks at.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "event.h"

namespace rw {
class Trace;
}

namespace rw::cli {

struct ProcessChoice {
    Tid pid = 0;
    std::string exec;

    void add_options(CLI::App* cmd);
    // The recorded process id asked for (0: the recorded program itself).
    // Throws UsageError naming the processes there are when none matches.
    Tid resolve(const Trace& trace) const;
};

} // namespace rw::cli
