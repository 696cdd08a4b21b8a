// rewind info [TRACE] [--json]
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_summary.h"

namespace rw::cli {
namespace {

std::string human_bytes(uint64_t n)
{
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = static_cast<double>(n);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string join(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& a : v)
        s += (s.empty() ? "" : " ") + a;
    return s;
}

// One line for the state of the trace: what a reader can rely on.
std::string completeness(const Trace& t, const TraceSummary& s, std::vector<std::string>& details)
{
    bool ok = true;
    if (!t.end()) {
        ok = false;
        details.push_back("the recorder did not finish (killed or crashed): the trace ends at event " +
                          std::to_string(s.events));
    } else if (!t.end()->complete) {
        ok = false;
        for (const auto& p : t.end()->problems)
            details.push_back(p);
    }
    if (s.stream_end.kind != StreamEnd::Kind::Clean) {
        ok = false;
        details.push_back("event stream " + describe(s.stream_end));
    }
    for (const auto& [index, why] : s.incomplete)
        details.push_back("at event " + std::to_string(index) + ": " + why);
    if (!s.unknown.empty())
        details.push_back("syscalls with unknown effects: replay will stop at the first one (event " +
                          std::to_string(std::min_element(s.unknown.begin(), s.unknown.end(),
                                                          [](const auto& a, const auto& b) {
                                                              return a.second.first_event < b.second.first_event;
                                                          })
                                             ->second.first_event) +
                          ")");
    if (ok && s.unknown.empty())
        return "complete";
    return ok ? "complete, with syscalls of unknown effect" : "INCOMPLETE";
}

} // namespace

void add_info(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("info", "Summarise a recording");
    auto trace_arg = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("trace", *trace_arg, "Trace directory or name (default: latest)");
    cmd->add_flag("--json", *json, "Machine-readable output");
    cmd->callback([=, &outcome] {
        Trace t(resolve_trace(trace_arg->empty() ? std::nullopt : std::optional(*trace_arg)));
        TraceSummary s = summarize(t);
        std::vector<std::string> details;
        std::string status = completeness(t, s, details);
        uint64_t duration = t.end() ? t.end()->duration_ns
                                    : (s.first_time_ns && s.last_time_ns ? *s.last_time_ns - *s.first_time_ns : 0);
        if (*json) {
            nlohmann::json j = {
                {"trace", t.dir().string()},
                {"command", t.meta().argv},
                {"program", t.meta().program},
                {"created", t.meta().created},
                {"duration_ns", duration},
                {"status", status},
                {"complete", status == "complete"},
                {"problems", details},
                {"events", s.events},
                {"events_by_kind", s.by_kind},
                {"syscalls", s.syscalls},
                {"processes", s.processes.size()},
                {"threads", s.threads.size()},
                {"memory_bytes", s.memory_bytes},
                {"stream_bytes", s.stream_bytes},
                {"file_copies", s.file_copies},
                {"file_bytes", s.file_bytes},
                {"stalls", s.rebuilt},
            };
            if (t.end())
                j["exit"] = {{"signaled", t.end()->exit.signaled},
                             {"code", t.end()->exit.code},
                             {"signal", t.end()->exit.signal}};
            nlohmann::json unknown = nlohmann::json::array();
            for (const auto& [k, u] : s.unknown)
                unknown.push_back({{"what", u.what}, {"count", u.count}, {"first_event", u.first_event}});
            j["unknown_effects"] = unknown;
            fmt::print("{}\n", j.dump(2));
        } else {
            const auto& m = t.meta();
            fmt::print("trace      {}\n", t.dir().string());
            fmt::print("command    {}\n", join(m.argv));
            fmt::print("program    {}\n", m.program);
            fmt::print("recorded   {} on {} (Linux {}, {})\n", m.created, m.hostname, m.kernel_release, m.cpu_model);
            fmt::print("duration   {:.3f} s\n", static_cast<double>(duration) / 1e9);
            fmt::print("exit       {}\n", t.end() ? t.end()->exit.describe() : "unknown (recorder did not finish)");
            fmt::print("status     {}\n", status);
            for (const auto& d : details)
                fmt::print("           - {}\n", d);
            std::string kinds;
            for (const auto& [k, n] : s.by_kind)
                kinds += (kinds.empty() ? "" : ", ") + fmt::format("{} {}", n, k);
            fmt::print("events     {} ({})\n", s.events, kinds);
            fmt::print("tasks      {} processes, {} threads\n", s.processes.size(), s.threads.size());
            fmt::print("captured   {} of program memory; trace {} of events + {} in {} file copies\n",
                       human_bytes(s.memory_bytes), human_bytes(s.stream_bytes), human_bytes(s.file_bytes),
                       s.file_copies);
            if (s.rebuilt)
                fmt::print("stalls     {} events finished by the supervisor (kernel side could not)\n", s.rebuilt);
            for (const auto& [k, u] : s.unknown)
                fmt::print("unknown    {} x{} (first at event {}): effects unknown, replay will refuse here\n", u.what,
                           u.count, u.first_event);
            std::vector<std::pair<std::string, uint64_t>> counts(s.syscalls.begin(), s.syscalls.end());
            std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
            fmt::print("syscalls   {:>8}  name\n", "count");
            for (const auto& [name, n] : counts)
                fmt::print("           {:>8}  {}\n", n, name);
        }
        outcome.exit_code = status.starts_with("INCOMPLETE") ? 3 : 0;
    });
    cmd->footer("Exit status: 0 for a complete trace, 3 for an incomplete or corrupt one.");
}

} // namespace rw::cli
