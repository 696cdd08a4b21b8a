// rewind ls: the recordings under $REWIND_DIR.
#include <fmt/core.h>

#include "commands.h"
#include "trace_dir.h"
#include "trace_meta.h"

namespace rw::cli {

void add_ls(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("ls", "List recordings");
    cmd->callback([&outcome] {
        auto traces = list_traces();
        if (traces.empty()) {
            fmt::print("no recordings in {}\n", traces_root().string());
            return;
        }
        fmt::print("{:<24} {:<20} {:>8} {:<12} {}\n", "NAME", "RECORDED", "EVENTS", "STATUS", "COMMAND");
        for (const auto& t : traces) {
            std::string when, command, status = "unfinished", events = "?";
            try {
                TraceMeta m = read_meta(t.path);
                when = m.created;
                for (const auto& a : m.argv)
                    command += (command.empty() ? "" : " ") + a;
                if (auto end = read_end(t.path)) {
                    events = std::to_string(end->events);
                    status = end->complete ? "complete" : "INCOMPLETE";
                }
            } catch (const std::exception&) {
                status = "unreadable";
            }
            fmt::print("{:<24} {:<20} {:>8} {:<12} {}\n", t.name, when, events, status, command);
        }
        (void)outcome;
    });
}

} // namespace rw::cli
