// rewind's `monitor` commands: where am I, checkpoints, and moves in time.
#pragma once

#include <optional>
#include <string>

#include "debug_session.h"

namespace rw::replay {

struct MonitorResult {
    std::string output;
    std::optional<ResumeRequest> travel; // a move: done before the reply
    bool machine = false;                // for tools: the reply after the move is JSON
};

MonitorResult run_monitor_command(DebugSession& session, const std::string& command);

// Why a move in time cannot be made (an event past the end, an unknown
// checkpoint), or nullopt.
std::optional<std::string> travel_error(DebugSession& session, const ResumeRequest& r);

// Parses "1234", "50%" (goto) into a request; nullopt with `error` set otherwise.
std::optional<ResumeRequest> parse_goto(const std::string& where, std::string& error);

} // namespace rw::replay
