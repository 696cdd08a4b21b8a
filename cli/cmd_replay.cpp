// rewind replay [TRACE] [-- GDB-ARGS…]: gdb attached to a replay server.
// rewind replay [TRACE] --autopilot: the replay alone, to the end.
#include <fmt/core.h>
#include <unistd.h>

#include <chrono>

#include "commands.h"
#include "event_format.h"
#include "exit_like.h"
#include "gdb_launch.h"
#include "process_choice.h"
#include "recorder.h"
#include "replayer.h"
#include "trace.h"
#include "trace_dir.h"

namespace rw::cli {
namespace {

// A progress line on stderr, for replays that take more than a moment.
class Progress {
public:
    explicit Progress(uint64_t total) : total_(total), start_(std::chrono::steady_clock::now()) {}
    void update(uint64_t event)
    {
        if (!isatty(STDERR_FILENO) || std::chrono::steady_clock::now() - start_ < std::chrono::seconds(2))
            return;
        if (total_)
            fmt::print(stderr, "\rrewind: replaying event {} of {} ({}%)  ", event, total_, event * 100 / total_);
        else
            fmt::print(stderr, "\rrewind: replaying event {}  ", event);
        shown_ = true;
    }
    ~Progress()
    {
        if (shown_)
            fmt::print(stderr, "\r\033[K");
    }

private:
    uint64_t total_;
    std::chrono::steady_clock::time_point start_;
    bool shown_ = false;
};

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
    cmd->add_option("--watchdog", a->watchdog, "Seconds a thread may run without reaching its next event")
        ->check(CLI::Range(1, 86400));
    cmd->footer("Without --autopilot, gdb debugs the replay, forwards and backwards; arguments after -- go to gdb.\n"
                "With --autopilot, the exit status is the recorded program's, or 90 divergence, 91 cannot\n"
                "reproduce, 92 trace ends early, 93 stuck. Examples:\n"
                "  rewind replay latest\n  rewind replay latest -- -ex 'break main' -ex continue\n"
                "  rewind replay --exec tr latest     (a child process; `rewind ps` lists them)\n"
                "  rewind replay --autopilot latest");
    cmd->callback([a, &outcome, &passthrough] {
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        if (!a->autopilot) {
            if (t.meta().thread_mode == "parallel")
                throw UsageError("debugging a trace recorded with --parallel is not supported yet; "
                                 "rewind replay --autopilot replays it",
                                 91);
            std::vector<std::string> serve_options;
            if (Tid pid = a->process.resolve(t))
                serve_options = {"--pid", std::to_string(pid)};
            outcome.exit_code = run_gdb(a->gdb, t, passthrough, serve_options);
            return;
        }
        if (a->process.pid || !a->process.exec.empty())
            throw UsageError("--pid and --exec choose the process gdb debugs; --autopilot replays them all");
        if (!passthrough.empty())
            throw UsageError("arguments after -- are for gdb, which --autopilot does not run");
        Progress progress(t.end() ? t.end()->events : 0);
        replay::ReplayOptions opts;
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
            replay::Replayer replayer(t, opts);
            status = replayer.run_to_end();
        } catch (const replay::ReplayError& e) {
            fmt::print(stderr, "rewind: {}\n", e.report());
            outcome.exit_code = replay::exit_status_for(e.kind());
            return;
        }
        exit_like(status);
    });
}

} // namespace rw::cli
