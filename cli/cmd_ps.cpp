// rewind ps [TRACE]: the recorded process tree.
#include <fmt/core.h>

#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "json_bytes.h"
#include "process_tree.h"
#include "trace.h"
#include "trace_dir.h"

namespace rw::cli {
namespace {

std::string joined(const std::vector<std::string>& argv)
{
    std::string out;
    for (const auto& a : argv)
        out += (out.empty() ? "" : " ") + a;
    return out;
}

void print_json(const std::vector<RecordedProcess>& tree)
{
    nlohmann::json all = nlohmann::json::array();
    for (const auto& p : tree) {
        nlohmann::json execs = nlohmann::json::array();
        for (const auto& x : p.execs)
            execs.push_back({{"event", x.event}, {"filename", x.filename}, {"argv", x.argv}});
        nlohmann::json j = {{"pid", p.pid},
                            {"parent", p.parent},
                            {"first_event", p.first_event},
                            {"last_event", p.last_event},
                            {"events", p.events},
                            {"threads", p.threads},
                            {"attached", p.attached},
                            {"command", p.command()},
                            {"execs", execs},
                            {"exit", p.describe_exit()}};
        if (p.exit_status)
            j["wait_status"] = *p.exit_status;
        all.push_back(j);
    }
    fmt::print("{}\n", dump_for_display(all, 2));
}

void print_table(const std::vector<RecordedProcess>& tree)
{
    std::map<Tid, int> depth;
    fmt::print("{:>7} {:>7} {:>15} {:>7} {:<18} {}\n", "PID", "PARENT", "EVENTS", "THREADS", "EXIT", "COMMAND");
    for (const auto& p : tree) {
        int d = p.parent && depth.count(p.parent) ? depth[p.parent] + 1 : 0;
        depth[p.pid] = d;
        std::string range = std::to_string(p.first_event) + "-" + std::to_string(p.last_event);
        std::string command = joined(p.command());
        if (p.execs.empty())
            command = (p.attached ? "(attached) " : "(fork of " + std::to_string(p.parent) + ") ") + command;
        fmt::print("{:>7} {:>7} {:>15} {:>7} {:<18} {}{}\n", p.pid, p.parent ? std::to_string(p.parent) : "-", range,
                   p.threads, p.describe_exit(), std::string(2 * d, ' '), command);
    }
}

} // namespace

void add_ps(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("ps", "List the processes of a recording");
    struct Args {
        std::string trace;
        bool json = false;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace", a->trace, "Trace directory or name (default: latest)");
    cmd->add_flag("--json", a->json, "One JSON array, one object per process");
    cmd->footer("EVENTS is the range of event numbers from the process's creation to its last event.\n"
                "Debug one of them with `rewind replay --pid PID` or `--exec NAME`. Example:\n"
                "  rewind ps latest");
    cmd->callback([a, &outcome] {
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        auto tree = process_tree(t);
        a->json ? print_json(tree) : print_table(tree);
        (void)outcome;
    });
}

} // namespace rw::cli
