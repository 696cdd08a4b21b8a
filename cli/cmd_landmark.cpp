// rewind landmark [TRACE] --every 10% | --at POSITION…: replays once and
// saves the replayed world at those positions into TRACE/landmarks/, so
// later replays (replay --from, serve, goto, reverse execution, watch)
// start there instead of at the program's first instruction.
#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "commands.h"
#include "landmarks.h"
#include "start_image.h"
#include "timeline.h"
#include "position_arg.h"
#include "progress.h"
#include "usage_error.h"
#include "replayer.h"
#include "trace.h"
#include "trace_dir.h"
#include "unique_fd.h"

namespace rw::cli {
namespace fs = std::filesystem;

namespace {

// The next free landmark number: landmarks already made are kept.
unsigned next_number(const fs::path& root)
{
    unsigned next = 1;
    std::error_code ec;
    for (const auto& d : fs::directory_iterator(root, ec)) {
        std::string name = d.path().filename().string();
        if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit) && name.size() < 9)
            next = std::max(next, static_cast<unsigned>(std::stoul(name)) + 1);
    }
    return next;
}

struct Target {
    uint64_t event;
    std::string asked; // as the user gave it
};

} // namespace

void add_landmark(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("landmark", "Save replay states into the trace, for replays that start later");
    struct Args {
        std::string trace;
        std::string every;
        std::vector<std::string> at;
        bool clear = false;
        int watchdog = 120;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace", a->trace, "Trace directory or name (default: latest)");
    auto* every = cmd->add_option("--every", a->every, "A landmark at every multiple of this share (e.g. 10%)");
    cmd->add_option("--at", a->at,
                    "Landmarks at these positions (90%, an event index, or a position as `monitor when` prints it)")
        ->excludes(every);
    cmd->add_flag("--clear", a->clear, "Remove the trace's landmarks first (alone: just remove them)");
    cmd->add_option("--watchdog", a->watchdog, "Seconds a thread may run without reaching its next event")
        ->check(CLI::Range(1, 86400));
    cmd->footer("Landmarks stand at event boundaries; a position inside the stretch between two events gets\n"
                "its boundary. CRIU 4.1 or later is needed (rewind doctor). Examples:\n"
                "  rewind landmark latest --every 10%\n  rewind landmark latest --at 50% 90%\n"
                "  rewind replay latest --from 90%");
    cmd->callback([a, &outcome] {
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        fs::path root = t.dir() / replay::kLandmarksDir;
        // Two runs on one trace would number, write and clear the same
        // landmarks: one at a time, held on the trace directory itself
        // (released when this process ends, however it ends).
        UniqueFd lock(::open(t.dir().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (lock.get() < 0 || ::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                throw UsageError("another rewind landmark is running on " + t.dir().string() + ": wait for it to end",
                                 1);
            throw UsageError("cannot lock " + t.dir().string() + ": " + std::strerror(errno), 1);
        }
        if (a->clear) {
            std::error_code ec;
            fs::remove_all(root, ec);
            if (ec)
                throw UsageError("cannot remove " + root.string() + ": " + ec.message(), 1);
            fmt::print("removed the landmarks of {}\n", t.name());
        }
        if (a->every.empty() && a->at.empty()) {
            if (a->clear)
                return;
            throw UsageError("give --every PCT% or --at POSITION…");
        }
        if (!t.end())
            throw UsageError("the recording did not finish: landmarks need a complete trace", 1);
        Progress progress(t.end()->events);
        replay::ReplayOptions opts;
        opts.one_cpu = true;
        opts.notify_syscalls = false; // CRIU would dump the filter without its listener
        opts.echo_output = false;
        opts.progress = [&](uint64_t e) { progress.update(e); };
        opts.watchdog = std::chrono::seconds(a->watchdog);
        // (An attached trace starts from its start image: the set keeps its processes.)
        auto start_set = std::make_unique<replay::LandmarkSet>(
            t, [](const std::string&) {}, false, false);
        replay::Replayer replayer(t, opts);
        replay::Timeline start_timeline;
        if (!replay::start_from_image(*start_set, start_timeline, replayer)) {
            // The program's start, as a debugging session has it: the exec
            // and the execve's return.
            replayer.step();
            replayer.step();
        }
        // After the trace's start is read: a damaged trace is said as a
        // replay says it (its status, 90-93), CRIU or not.
        std::string criu = replay::find_criu();
        if (criu.empty())
            throw UsageError("CRIU is not installed: run scripts/install-criu.sh (rewind doctor says more)", 1);
        uint64_t begin = replayer.next_event_index();
        uint64_t total = t.end()->events;

        std::vector<Target> targets;
        if (!a->every.empty()) {
            PositionArg step = PositionArg::parse(a->every);
            if (!step.percent || *step.percent == 0 || *step.percent >= 100)
                throw UsageError("--every takes a percentage from 1% to 99%, not '" + a->every + "'");
            for (uint64_t p = *step.percent; p < 100; p += *step.percent)
                targets.push_back({PositionArg::event_at_percent(begin, total, p), std::to_string(p) + "%"});
        }
        for (const auto& text : a->at) {
            PositionArg arg = PositionArg::parse(text);
            uint64_t event =
                arg.percent ? PositionArg::event_at_percent(begin, total, *arg.percent) : arg.position.event;
            if (event >= total)
                throw UsageError(fmt::format("{} is past the recording's last event ({})", text, total - 1));
            targets.push_back({std::max(event, begin), text});
        }
        std::sort(targets.begin(), targets.end(), [](const Target& x, const Target& y) { return x.event < y.event; });
        targets.erase(std::unique(targets.begin(), targets.end(),
                                  [](const Target& x, const Target& y) { return x.event == y.event; }),
                      targets.end());

        fs::create_directories(root);
        fs::permissions(root, fs::perms::owner_all); // as private as the trace
        unsigned number = next_number(root);
        uint64_t last = UINT64_MAX;
        int made = 0, failed = 0;
        try {
            for (const auto& target : targets) {
                while (replayer.next_event_index() < target.event)
                    if (!replayer.step())
                        break;
                // Not every boundary can be saved (a thread inside a call
                // that runs for real): the next one that can.
                std::string why;
                while (!replayer.can_snapshot(&why, true))
                    if (!replayer.step())
                        break;
                uint64_t at = replayer.next_event_index();
                progress.clear();
                if (!replayer.peek_next_event()) {
                    fmt::print(stderr,
                               "rewind: no landmark for {}: the recording ends before a boundary that can "
                               "be saved ({})\n",
                               target.asked, why);
                    break;
                }
                if (at == last)
                    continue;
                if (at != target.event)
                    fmt::print(stderr, "rewind: the landmark for {} stands at event {}, not {}: {}\n", target.asked, at,
                               target.event, why);
                fs::path dir = root / std::to_string(number);
                replay::LandmarkManifest m;
                try {
                    m = replay::write_landmark(replayer, dir, criu);
                } catch (const replay::ReplayError&) {
                    throw;
                } catch (const std::exception& e) {
                    // This one only: the replay goes on to the next.
                    fmt::print(stderr, "rewind: no landmark for {} (event {}): {}\n", target.asked, at, e.what());
                    failed++;
                    continue;
                }
                number++;
                fmt::print("landmark {} at event {} ({}): {} process{}, {:.1f} MB, saved in {:.2f} s\n",
                           dir.filename().string(), at, target.asked, m.processes.size(),
                           m.processes.size() == 1 ? "" : "es", m.image_bytes / 1e6, m.dump_seconds);
                last = at;
                made++;
            }
        } catch (const replay::ReplayError& e) {
            fmt::print(stderr, "rewind: {}\n", e.report());
            outcome.exit_code = replay::exit_status_for(e.kind());
            return;
        } catch (const std::exception& e) {
            fmt::print(stderr, "rewind: cannot save a landmark: {}\n", e.what());
            outcome.exit_code = 1;
            return;
        }
        if (made == 0 || failed > 0) {
            fmt::print(stderr, "rewind: {} landmark{} saved, {} could not be\n", made, made == 1 ? "" : "s", failed);
            outcome.exit_code = 1;
        }
    });
}

} // namespace rw::cli
