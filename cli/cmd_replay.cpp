// rewind replay [TRACE] [-- GDB-ARGS…]: gdb attached to a replay server.
// rewind replay [TRACE] --autopilot: the replay alone, to the end.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "commands.h"
#include "event_format.h"
#include "exit_like.h"
#include "landmarks.h"
#include "start_image.h"
#include "position_arg.h"
#include "progress.h"
#include "timeline.h"
#include "gdb_launch.h"
#include "process_choice.h"
#include "usage_error.h"
#include "replayer.h"
#include "trace.h"
#include "trace_dir.h"

namespace rw::cli {
namespace {

// The replay alone from `from` (an event boundary) to the end: started at
// the nearest landmark before it, the program's output shown from there.
ExitStatus replay_from(const Trace& t, replay::ReplayOptions opts, const std::optional<PositionArg>& from,
                       bool use_landmarks, bool trust_landmarks)
{
    auto say = [](const std::string& line) { fmt::print(stderr, "rewind: {}\n", line); };
    // Declared before the replayer: what it restored must outlive the replay.
    // (An attached trace starts from its start image, a landmark of its own.)
    const bool attached = t.meta().attached.has_value();
    std::unique_ptr<replay::LandmarkSet> landmarks;
    if ((from && use_landmarks) || attached)
        landmarks = std::make_unique<replay::LandmarkSet>(t, say, trust_landmarks, from && use_landmarks);
    replay::Replayer replayer(t, opts);
    // After the replayer: its snapshots use the replayer's waiter until they go.
    replay::Timeline timeline;
    uint64_t begin = 0;
    if (attached)
        replay::start_from_image(*landmarks, timeline, replayer);
    if (!from)
        return replayer.run_to_end();
    if (!attached) {
        // The program's start, as a debugging session has it.
        replayer.step();
        replayer.step();
        begin = replayer.next_event_index();
    }
    uint64_t total = t.end() ? t.end()->events : 0;
    uint64_t target =
        from->percent ? PositionArg::event_at_percent(begin, total, *from->percent) : from->position.event;
    if (target >= total)
        throw UsageError(
            fmt::format("--from {} is past the recording's last event ({})", from->describe(), total ? total - 1 : 0));
    target = std::max(target, begin);
    replayer.echo_from(target);
    if (landmarks && !landmarks->empty()) {
        // A failed restore leaves no replayed world: this copy of the start
        // stands in when no landmark can be used.
        if (!attached)
            timeline.add(replay::Timeline::Kind::Beginning, perfclock::Position{begin, {}},
                         replayer.take_snapshot(false));
        bool torn = false;
        while (const replay::Timeline::Entry* e = landmarks->bring_in(
                   perfclock::Position{target, {}}, perfclock::Position{begin, {}}, timeline, replayer)) {
            try {
                replayer.restore(*e->snapshot);
                torn = false;
                break;
            } catch (const replay::ReplayError& x) {
                landmarks->failed(*e, x.what());
                timeline.remove(e);
                torn = true;
            }
        }
        if (torn) {
            say("replaying from the start");
            replayer.restore(*timeline.best_for(perfclock::Position{begin, {}})->snapshot);
        }
    }
    return replayer.run_to_end(); // (the output shows from `target` on: echo_from)
}

} // namespace

void add_replay(CLI::App& app, Outcome& outcome, const std::vector<std::string>& passthrough)
{
    auto* cmd = app.add_subcommand("replay", "Replay a recording exactly");
    struct Args {
        std::string trace;
        bool autopilot = false;
        bool quiet = false;
        int watchdog = 120;
        bool verbose = false;
        std::string from;
        bool no_landmarks = false;
        bool trust_landmarks = false;
        std::string gdb = "/usr/bin/gdb";
        ProcessChoice process;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace", a->trace, "Trace directory or name (default: latest)");
    a->process.add_options(cmd);
    cmd->add_flag("--autopilot", a->autopilot, "Replay to the end without a debugger, showing the program's output");
    cmd->add_flag("-q,--quiet", a->quiet, "Do not re-emit the program's output");
    cmd->add_flag("-v,--verbose", a->verbose, "Print each event on stderr as it is replayed");
    cmd->add_option("--gdb", a->gdb, "The gdb to run (default: /usr/bin/gdb)");
    cmd->add_option("--from", a->from,
                    "Start at this position (90%, an event index, or a position as `monitor when` prints it), from the "
                    "nearest landmark");
    cmd->add_flag("--no-landmarks", a->no_landmarks, "Do not start from the trace's landmarks (rewind landmark)");
    add_trust_landmarks_flag(cmd, a->trust_landmarks);
    cmd->add_option("--watchdog", a->watchdog, "Seconds a thread may run without reaching its next event")
        ->check(CLI::Range(1, 86400));
    cmd->footer("Without --autopilot, gdb debugs the replay, forwards and backwards; arguments after -- go to gdb.\n"
                "With --autopilot, the exit status is the recorded program's, or 90 divergence, 91 cannot\n"
                "reproduce, 92 trace ends early, 93 stuck. Examples:\n"
                "  rewind replay latest\n  rewind replay latest -- -ex 'break main' -ex continue\n"
                "  rewind replay --exec tr latest     (a child process; `rewind ps` lists them)\n"
                "  rewind replay --from 90% latest    (from the nearest landmark: rewind landmark)\n"
                "  rewind replay --autopilot latest");
    cmd->callback([a, &outcome, &passthrough] {
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        std::optional<PositionArg> from;
        if (!a->from.empty()) {
            from = PositionArg::parse(a->from);
            from->check_within(t.end() ? t.end()->events : 0);
        }
        if (!a->autopilot) {
            std::vector<std::string> serve_options;
            if (Tid pid = a->process.resolve(t))
                serve_options = {"--pid", std::to_string(pid)};
            if (from)
                serve_options.insert(serve_options.end(), {"--from", a->from});
            if (a->no_landmarks)
                serve_options.push_back("--no-landmarks");
            if (a->trust_landmarks)
                serve_options.push_back("--trust-landmarks");
            outcome.exit_code = run_gdb(a->gdb, t, passthrough, serve_options);
            return;
        }
        if (a->process.pid || !a->process.exec.empty())
            throw UsageError("--pid and --exec choose the process gdb debugs; --autopilot replays them all");
        if (!passthrough.empty())
            throw UsageError("arguments after -- are for gdb, which --autopilot does not run");
        if (from && !from->percent && !from->position.path.empty())
            throw UsageError("--autopilot --from takes a percentage or an event index: a replay without gdb "
                             "shows output from an event on");
        Progress progress(t.end() ? t.end()->events : 0);
        replay::ReplayOptions opts;
        opts.one_cpu = true;
        opts.echo_output = !a->quiet;
        opts.watchdog = std::chrono::seconds(a->watchdog);
        opts.progress = [&](uint64_t e) { progress.update(e); };
        if (a->verbose)
            opts.on_event = [](uint64_t index, const Event& e) {
                FormatOptions f;
                f.bytes = 0;
                fmt::print(stderr, "{}\n", format_event(index, e, f));
            };
        ExitStatus status;
        try {
            status = replay_from(t, opts, from, !a->no_landmarks, a->trust_landmarks);
        } catch (const replay::ReplayError& e) {
            fmt::print(stderr, "rewind: {}\n", e.report());
            outcome.exit_code = replay::exit_status_for(e.kind());
            return;
        }
        if (t.end() && t.end()->detached)
            fmt::print(stderr,
                       "rewind: the recording ends where rewind detached from {}, which ran on; so does the "
                       "replay\n",
                       t.meta().attached ? "process " + std::to_string(t.meta().attached->pid)
                                         : std::filesystem::path(t.meta().program).filename().string());
        exit_like(status);
    });
}

} // namespace rw::cli
