#include <cstdio>
#include <exception>
#include <system_error>

#include "bytes.h"
#include "commands.h"
#include "event_stream.h"
#include "replay_error.h"
#include "usage_error.h"
#include "signal_state.h"
#include "trace_dir.h"
#include "version.h"

int main(int argc, char** argv)
{
    rw::remember_initial_signal_state();
    CLI::App app{"rewind: record a Linux program, then replay it exactly, forwards and backwards"};
    app.set_version_flag("--version", rw::kRewindVersion);
    app.require_subcommand(1);
    rw::cli::Outcome outcome;
    rw::cli::add_record(app, outcome);
    std::vector<char*> args(argv, argv + argc);
    rw::cli::strip_record_separator(args);
    std::vector<std::string> gdb_args = rw::cli::take_passthrough(args, "replay");
    rw::cli::add_replay(app, outcome, gdb_args);
    rw::cli::add_serve(app, outcome);
    rw::cli::add_landmark(app, outcome);
    rw::cli::add_watch(app, outcome);
    rw::cli::add_calls(app, outcome);
    rw::cli::add_writes(app, outcome);
    rw::cli::add_origin(app, outcome);
    rw::cli::add_info(app, outcome);
    rw::cli::add_ls(app, outcome);
    rw::cli::add_ps(app, outcome);
    rw::cli::add_dump(app, outcome);
    rw::cli::add_doctor(app, outcome);
    rw::cli::add_stop(app, outcome);
    if (std::string problem = rw::cli::check_subcommand(app, args); !problem.empty()) {
        std::fprintf(stderr, "rewind: %s\n", problem.c_str());
        return 2;
    }
    try {
        app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::ParseError& e) {
        // --help and --version exit 0; any usage error exits 2, as documented.
        int code = app.exit(e);
        return code == 0 ? 0 : 2;
    } catch (const rw::UsageError& e) {
        std::fprintf(stderr, "rewind: %s\n", e.what());
        return e.exit_code;
    } catch (const rw::TraceDirError& e) {
        std::fprintf(stderr, "rewind: %s\n", e.what());
        return 2;
    } catch (const rw::FormatVersionError& e) {
        std::fprintf(stderr, "rewind: %s\n", e.what());
        return 3;
    } catch (const rw::replay::ReplayError& e) {
        // A replay that failed before a subcommand could catch it (landmark's
        // first steps, a debugging session's start): said in full, with the
        // status `rewind replay` gives.
        std::fprintf(stderr, "rewind: %s\n", e.report().c_str());
        return rw::replay::exit_status_for(e.kind());
    } catch (const rw::FormatError& e) {
        std::fprintf(stderr, "rewind: corrupt trace: %s\n", e.what());
        // The subcommands that replay say "damaged trace" as a replay does.
        for (const char* replaying : {"replay", "serve", "landmark", "watch"})
            if (app.got_subcommand(replaying))
                return rw::replay::exit_status_for(rw::replay::ReplayErrorKind::Damaged);
        return 3;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rewind: %s\n", e.what());
        return 1;
    }
    return outcome.exit_code;
}
