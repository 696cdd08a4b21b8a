// Each `rewind` subcommand registers itself on the application here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rw::cli {

// Set by the subcommand that ran: the process exit status.
struct Outcome {
    int exit_code = 0;
};

void add_record(CLI::App& app, Outcome& outcome);
// `rewind record [OPTIONS] -- PROGRAM ARGS…`: removes the separator, which
// the argument parser would otherwise take as the end of all parsing.
void strip_record_separator(std::vector<char*>& args);
void add_info(CLI::App& app, Outcome& outcome);
// `rewind replay [OPTIONS] [TRACE] -- GDB-ARGS…`: the arguments after the
// separator go to gdb untouched.
void add_replay(CLI::App& app, Outcome& outcome, const std::vector<std::string>& passthrough);
void add_serve(CLI::App& app, Outcome& outcome);
void add_landmark(CLI::App& app, Outcome& outcome);
void add_watch(CLI::App& app, Outcome& outcome);
void add_calls(CLI::App& app, Outcome& outcome);
void add_writes(CLI::App& app, Outcome& outcome);
void add_origin(CLI::App& app, Outcome& outcome);
// Takes the arguments after `--` out of a subcommand's command line.
std::vector<std::string> take_passthrough(std::vector<char*>& args, std::string_view subcommand);
void add_ls(CLI::App& app, Outcome& outcome);
void add_ps(CLI::App& app, Outcome& outcome);
void add_dump(CLI::App& app, Outcome& outcome);
void add_doctor(CLI::App& app, Outcome& outcome);
void add_stop(CLI::App& app, Outcome& outcome);

// The flag that lets replay, serve and watch restore landmarks this user's
// key did not sign (replay/landmarks/landmark_key.h).
inline void add_trust_landmarks_flag(CLI::App* cmd, bool& trust)
{
    cmd->add_flag("--trust-landmarks", trust,
                  "Restore landmarks this user's key did not sign (made elsewhere, or by an older rewind): CRIU "
                  "restores whatever their images say, as root");
}

// Before parsing: "" if the command line names a subcommand (or asks for
// --help/--version), else what to tell the user (the word not understood
// and the nearest subcommand, or the list of subcommands).
std::string check_subcommand(const CLI::App& app, const std::vector<char*>& args);

} // namespace rw::cli
