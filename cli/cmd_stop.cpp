// rewind stop TRACE: ends a recording that runs in another terminal, as
// Ctrl-C on its `rewind record` would: a recording of a process rewind
// attached to ends with a detach (the process runs on); a program rewind
// started gets the SIGTERM, as from a terminal, and the recording ends
// with it.
#include <fmt/core.h>
#include <signal.h>

#include <chrono>
#include <thread>

#include "commands.h"
#include "trace_dir.h"
#include "trace_meta.h"
#include "usage_error.h"

namespace rw::cli {

void add_stop(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("stop", "End a recording that is running (a recording of an attached process "
                                           "ends with a detach)");
    auto trace = std::make_shared<std::string>();
    auto wait_s = std::make_shared<int>(60);
    cmd->add_option("trace", *trace, "The trace being recorded (its directory or name)")->required();
    cmd->add_option("--wait", *wait_s, "Seconds to wait for the recording to end")->check(CLI::Range(1, 3600));
    cmd->footer("Example:\n  rewind record --pid 1234 -o srv &\n  rewind stop srv");
    cmd->callback([trace, wait_s, &outcome] {
        std::filesystem::path dir;
        try {
            dir = resolve_trace(*trace);
        } catch (const TraceDirError& e) {
            throw UsageError(e.what(), 1);
        }
        if (read_end(dir))
            throw UsageError("the recording " + dir.string() + " has ended already", 1);
        auto recorder = recorder_of(dir);
        if (!recorder)
            throw UsageError("no rewind is recording " + dir.string() +
                                 " (its recorder is gone: the trace was cut short; see `rewind info`)",
                             1);
        if (::kill(*recorder, SIGTERM) != 0)
            throw UsageError("cannot signal the recorder (process " + std::to_string(*recorder) + ")", 1);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*wait_s);
        while (!read_end(dir) || recorder_of(dir)) {
            if (std::chrono::steady_clock::now() > deadline)
                throw UsageError("the recorder (process " + std::to_string(*recorder) + ") did not end the " +
                                     "recording within " + std::to_string(*wait_s) + " s",
                                 1);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        auto end = read_end(dir);
        fmt::print(stderr, "rewind: {} ended: {} events{}\n", dir.string(), end->events,
                   end->detached ? ", detached (the process runs on)" : "");
        outcome.exit_code = 0;
    });
}

} // namespace rw::cli
