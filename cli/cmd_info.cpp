// rewind info [TRACE] [--json] [--verify]
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "json_bytes.h"
#include "commands.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_summary.h"
#include "trace_verify.h"
#include "landmarks.h"
#include "replay_limits.h"

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

// The state of the trace: what a reader can rely on. `problems` are losses
// (the trace is incomplete); `warnings` are places replay cannot pass.
struct Completeness {
    bool complete = true;
    std::vector<std::string> problems;
    std::vector<std::string> warnings;
    std::optional<uint64_t> replay_stops;
    std::string status() const
    {
        if (!complete)
            return "INCOMPLETE";
        if (replay_stops)
            return "complete; replay stops at event " + std::to_string(*replay_stops);
        return "complete";
    }
};

Completeness completeness(const Trace& t, const TraceSummary& s)
{
    Completeness c;
    if (!t.end()) {
        c.problems.push_back("the recorder did not finish (killed or crashed): the trace ends at event " +
                             std::to_string(s.events));
    } else if (!t.end()->complete) {
        for (const auto& p : t.end()->problems)
            c.problems.push_back(p);
    }
    if (s.stream_end.kind != StreamEnd::Kind::Clean)
        c.problems.push_back("event stream " + describe(s.stream_end));
    for (const auto& [index, why] : s.incomplete) {
        // The note that ends a refused recording: end.json says it already.
        if (t.end() && t.end()->refusal && t.end()->refusal->event == index)
            continue;
        c.problems.push_back("at event " + std::to_string(index) + ": " + why);
    }
    c.complete = c.problems.empty();
    if (s.replay_stops) {
        c.replay_stops = s.replay_stops->first;
        c.warnings.push_back("replay stops at event " + std::to_string(s.replay_stops->first) + ": " +
                             s.replay_stops->second);
    }
    return c;
}

// For a recording that never wrote end.json: from its files' times.
uint64_t estimated_duration_ns(const Trace& t)
{
    std::error_code ec;
    auto written = std::filesystem::last_write_time(t.dir() / trace_files::kEvents, ec);
    if (ec)
        return 0;
    auto unix_written = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::file_clock::to_sys(written).time_since_epoch())
                            .count();
    int64_t d = unix_written - static_cast<int64_t>(t.meta().created_unix_ns);
    return d > 0 ? static_cast<uint64_t>(d) : 0;
}

} // namespace

void add_info(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("info", "Summarise a recording");
    auto trace_arg = std::make_shared<std::string>();
    auto json = std::make_shared<bool>(false);
    cmd->add_option("trace", *trace_arg, "Trace directory or name (default: latest)");
    cmd->add_flag("--json", *json, "Machine-readable output");
    auto verify = std::make_shared<bool>(false);
    cmd->add_flag(
        "--verify", *verify,
        "Also check every file copy and landmark against its checksums (every event's checksum is always checked)");
    cmd->callback([=, &outcome] {
        Trace t(resolve_trace(trace_arg->empty() ? std::nullopt : std::optional(*trace_arg)));
        TraceSummary s = summarize(t);
        Completeness c = completeness(t, s);
        CopyCheck copies;
        auto landmarks = replay::list_landmarks(t);
        std::vector<std::vector<std::string>> landmark_problems(landmarks.size());
        if (*verify) {
            copies = verify_file_copies(t, s);
            c.problems.insert(c.problems.end(), copies.problems.begin(), copies.problems.end());
            // A bad landmark is skipped by replays, but the trace holds it.
            for (size_t i = 0; i < landmarks.size(); i++) {
                landmark_problems[i] = replay::verify_landmark(t, landmarks[i]);
                for (const auto& p : landmark_problems[i])
                    c.problems.push_back("landmark " + landmarks[i].name + ": " + p + " (replays skip it)");
            }
        } else {
            for (size_t i = 0; i < landmarks.size(); i++)
                if (!landmarks[i].manifest)
                    landmark_problems[i] = {landmarks[i].problem};
        }
        c.complete = c.problems.empty();
        std::string status = c.status();
        uint64_t duration = t.end() ? t.end()->duration_ns : estimated_duration_ns(t);
        if (*json) {
            nlohmann::json j = {
                {"trace", t.dir().string()},
                {"command", t.meta().argv},
                {"program", t.meta().program},
                {"created", t.meta().created},
                {"duration_ns", duration},
                {"status", status},
                {"complete", c.complete},
                {"problems", c.problems},
                {"warnings", c.warnings},
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
                {"scrubbed_env", t.meta().scrubbed_env},
                {"thread_mode", t.meta().thread_mode},
                {"replay_stops_at",
                 s.replay_stops ? nlohmann::json{{"event", s.replay_stops->first}, {"why", s.replay_stops->second}}
                                : nlohmann::json(nullptr)},
            };
            if (std::string limit = parallel_replay_limit(t.meta().thread_mode); !limit.empty())
                j["replay_limit"] = limit;
            if (const auto& a = t.meta().attached) {
                j["attached"] = {{"pid", a->pid},
                                 {"threads", a->threads},
                                 {"pause_seconds", a->pause_seconds},
                                 {"start_image", a->start_image}};
                if (!a->descendants.empty()) {
                    j["attached"]["descendants"] = nlohmann::json::array();
                    for (const auto& d : a->descendants)
                        j["attached"]["descendants"].push_back(
                            {{"pid", d.pid}, {"parent", d.parent}, {"threads", d.threads}});
                }
            }
            if (t.end()) {
                j["exit"] = {{"signaled", t.end()->exit.signaled},
                             {"code", t.end()->exit.code},
                             {"signal", t.end()->exit.signal}};
                j["killed_at_exit"] = t.end()->killed_at_exit;
                if (t.end()->detached)
                    j["detached"] = {{"reason", t.end()->detach_reason}};
                if (const auto& w = t.end()->window)
                    j["window"] = {{"size", w->size},
                                   {"recorded_seconds", static_cast<double>(w->recorded_ns) / 1e9},
                                   {"events_dropped", w->events_dropped},
                                   {"images_taken", w->images_taken},
                                   {"images_missed", w->images_missed}};
                if (const auto& r = t.end()->refusal)
                    j["refusal"] = {{"event", r->event}, {"tid", r->tid}, {"why", r->why}};
            }
            nlohmann::json unknown = nlohmann::json::array();
            for (const auto& [k, u] : s.unknown)
                unknown.push_back({{"what", u.what},
                                   {"count", u.count},
                                   {"first_event", u.first_event},
                                   {"first_success", u.first_success ? nlohmann::json(*u.first_success) : nullptr}});
            j["unknown_effects"] = unknown;
            if (*verify)
                j["verified_copies"] = copies.intact;
            nlohmann::json lj = nlohmann::json::array();
            for (size_t i = 0; i < landmarks.size(); i++) {
                const auto& l = landmarks[i];
                nlohmann::json e = {{"name", l.name}, {"problems", landmark_problems[i]}};
                if (l.manifest) {
                    e["position"] = l.manifest->position.serialize();
                    e["event"] = l.manifest->position.event;
                    e["processes"] = l.manifest->processes.size();
                    e["image_bytes"] = l.manifest->image_bytes;
                    e["authentic"] = l.manifest->authentic;
                    if (!l.manifest->authentic)
                        e["not_authentic"] = l.manifest->not_authentic;
                }
                lj.push_back(e);
            }
            j["landmarks"] = lj;
            fmt::print("{}\n", dump_for_display(j, 2));
        } else {
            const auto& m = t.meta();
            fmt::print("trace      {}\n", t.dir().string());
            fmt::print("command    {}\n", join(m.argv));
            fmt::print("program    {}\n", m.program);
            if (!m.scrubbed_env.empty())
                fmt::print("scrubbed   {} (placeholders in the trace; the replayed program sees them)\n",
                           join(m.scrubbed_env));
            fmt::print("recorded   {} on {} (Linux {}, {})\n", m.created, m.hostname, m.kernel_release, m.cpu_model);
            fmt::print("duration   {:.3f} s\n", static_cast<double>(duration) / 1e9);
            if (const auto& a = m.attached) {
                size_t below = a->descendants.size();
                fmt::print("attached   to running process {} ({} thread{}){}, stopped {:.0f} ms {}; the "
                           "replay starts from its start image ({}/)\n",
                           a->pid, a->threads, a->threads == 1 ? "" : "s",
                           below ? fmt::format(" and the {} process{} below it (--tree)", below, below == 1 ? "" : "es")
                                 : "",
                           a->pause_seconds * 1000, t.end() && t.end()->window ? "for this start image" : "to attach",
                           a->start_image);
            }
            if (const auto& w = t.end() ? t.end()->window : std::nullopt) {
                uint64_t missed = 0;
                for (const auto& [why, n] : w->images_missed)
                    missed += n;
                fmt::print("window     the end of a flight recording of {:.1f} s (--window {}): {} start image{} "
                           "taken{}, this trace starts at the oldest one kept; {} event{} before it dropped\n",
                           static_cast<double>(w->recorded_ns) / 1e9, w->size, w->images_taken,
                           w->images_taken == 1 ? "" : "s",
                           missed ? fmt::format(" ({} could not be, see `rewind info --json`)", missed) : "",
                           w->events_dropped, w->events_dropped == 1 ? "" : "s");
            }
            if (t.end() && t.end()->detached)
                fmt::print("exit       none: detached ({}), the process ran on\n", t.end()->detach_reason);
            else if (t.end() && t.end()->refusal)
                fmt::print("exit       none: rewind record refused to go on at event {} and killed the program\n",
                           t.end()->refusal->event);
            else
                fmt::print("exit       {}\n", t.end() ? t.end()->exit.describe() : "unknown (recorder did not finish)");
            if (t.end() && t.end()->killed_at_exit)
                fmt::print("left       {} process{} still running at its exit, killed by the recorder (no --wait)\n",
                           t.end()->killed_at_exit, t.end()->killed_at_exit == 1 ? "" : "es");
            fmt::print("status     {}\n", status);
            for (const auto& d : c.problems)
                fmt::print("           - {}\n", d);
            for (const auto& d : c.warnings)
                fmt::print("           - {}\n", d);
            if (*verify && c.complete)
                fmt::print("verified   {} file copies match their content hashes; every event's checksum holds\n",
                           copies.intact);
            std::string kinds;
            for (const auto& [k, n] : s.by_kind)
                kinds += (kinds.empty() ? "" : ", ") + fmt::format("{} {}", n, k);
            fmt::print("events     {} ({})\n", s.events, kinds);
            fmt::print("tasks      {} processes, {} threads\n", s.processes.size(), s.threads.size());
            fmt::print("threads    {}\n", m.thread_mode == "parallel"
                                              ? "parallel (ran freely; libc synchronization calls ordered)"
                                              : "serialized (one at a time per process)");
            if (std::string limit = parallel_replay_limit(m.thread_mode); !limit.empty())
                fmt::print("           - {}\n", limit);
            fmt::print("captured   {} of program memory; trace {} of events + {} in {} file copies\n",
                       human_bytes(s.memory_bytes), human_bytes(s.stream_bytes), human_bytes(s.file_bytes),
                       s.file_copies);
            if (s.rebuilt)
                fmt::print("stalls     {} events finished by the supervisor (kernel side could not)\n", s.rebuilt);
            for (size_t i = 0; i < landmarks.size(); i++) {
                const auto& l = landmarks[i];
                std::string what = l.manifest ? fmt::format("event {}, {} process{}, {}", l.manifest->position.event,
                                                            l.manifest->processes.size(),
                                                            l.manifest->processes.size() == 1 ? "" : "es",
                                                            human_bytes(l.manifest->image_bytes))
                                              : std::string("unusable");
                std::string state = landmark_problems[i].empty() ? (*verify ? ", verified" : "") : ", BAD";
                fmt::print("landmark   {}: {}{}\n", l.name, what, state);
                for (const auto& p : landmark_problems[i])
                    fmt::print("           - {}\n", p);
                if (l.manifest && !l.manifest->authentic)
                    fmt::print("           - not used without --trust-landmarks: {}\n", l.manifest->not_authentic);
            }
            for (const auto& [k, u] : s.unknown)
                fmt::print(
                    "unknown    {} x{} (first at event {}): effects unknown, {}\n", u.what, u.count, u.first_event,
                    u.first_success ? fmt::format("succeeded at event {}: replay will refuse there", *u.first_success)
                                    : std::string("every call failed: replayed with its result"));
            std::vector<std::pair<std::string, uint64_t>> counts(s.syscalls.begin(), s.syscalls.end());
            std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
                return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
            fmt::print("syscalls   {:>8}  name\n", "count");
            for (const auto& [name, n] : counts)
                fmt::print("           {:>8}  {}\n", n, name);
        }
        outcome.exit_code = c.complete ? 0 : 3;
    });
    cmd->footer("Exit status: 0 for a complete trace, 3 for an incomplete or corrupt one (with --verify: also one "
                "whose file copies or landmarks were altered).");
}

} // namespace rw::cli
