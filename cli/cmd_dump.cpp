// rewind dump [TRACE] [--json] [--tid N] [--from I] [--to I] [--bytes N] [--errors]
#include <fmt/core.h>

#include <string.h>

#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_bytes.h"
#include "event_format.h"
#include "trace.h"
#include "trace_dir.h"

namespace rw::cli {

void add_dump(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("dump", "Print every event of a recording");
    struct Args {
        std::string trace;
        bool json = false;
        int tid = 0;
        uint64_t from = 0;
        uint64_t to = UINT64_MAX;
        int64_t bytes = -2;
        bool errors = false;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace", a->trace, "Trace directory or name (default: latest)");
    cmd->add_flag("--json", a->json, "One JSON object per line (memory as hex)");
    cmd->add_option("--tid", a->tid, "Only this thread's events");
    cmd->add_option("--from", a->from, "First event index");
    cmd->add_option("--to", a->to, "Last event index");
    cmd->add_option("--bytes", a->bytes, "Memory bytes shown per range (-1: all; default 48, all with --json)");
    cmd->add_flag("--errors", a->errors,
                  "Only the syscalls that failed (returned an errno to the program), then a count by errno");
    cmd->callback([a, &outcome] {
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        FormatOptions opts;
        opts.bytes = a->bytes != -2 ? a->bytes : (a->json ? -1 : 48);
        auto reader = t.events();
        Event e;
        uint64_t index = 0, syscalls = 0;
        std::map<int, uint64_t> failures; // errno: how many
        for (; reader.next(e); index++) {
            if (index < a->from || index > a->to || (a->tid && event_tid(e) != a->tid))
                continue;
            if (a->errors) {
                syscalls += std::holds_alternative<SyscallEvent>(e) ? 1 : 0;
                int err = failed_errno(e);
                if (!err)
                    continue;
                failures[err]++;
            }
            if (a->json)
                fmt::print("{}\n", dump_for_display(event_to_json(index, e, opts)));
            else
                fmt::print("{}\n", format_event(index, e, opts));
        }
        if (a->errors && !a->json) {
            uint64_t failed = 0;
            std::string by;
            for (const auto& [err, n] : failures) {
                failed += n;
                const char* name = strerrorname_np(err);
                by += fmt::format("{}{} {}", by.empty() ? ": " : ", ", name ? name : std::to_string(err), n);
            }
            fmt::print("{} of {} syscalls failed{}\n", failed, syscalls, by);
        }
        if (reader.end().kind != StreamEnd::Kind::Clean) {
            fmt::print(stderr, "rewind: the event stream is {}\n", describe(reader.end()));
            outcome.exit_code = 3;
        } else if (!t.end()) {
            fmt::print(stderr, "rewind: the recorder did not finish; the trace ends at event {}\n", index);
            outcome.exit_code = 3;
        }
    });
}

} // namespace rw::cli
