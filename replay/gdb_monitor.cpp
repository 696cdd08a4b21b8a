#include "gdb_monitor.h"

#include <sstream>

namespace rw::replay {
namespace {

std::string trim(std::string s)
{
    size_t a = s.find_first_not_of(" \t\n");
    size_t b = s.find_last_not_of(" \t\n");
    return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

const char* kHelp = R"(rewind commands (also as gdb commands: when, goto, checkpoint, restart, info checkpoints):
  monitor when                  where the replay stands
  monitor goto EVENT|PCT%       go to an event, or a percentage of the recording
  monitor checkpoint            remember this point
  monitor info checkpoints      list checkpoints
  monitor restart [N]           go to checkpoint N (none: the beginning)
  monitor delete checkpoint N   forget checkpoint N
)";

} // namespace

std::optional<ResumeRequest> parse_goto(const std::string& where, std::string& error)
{
    std::string w = trim(where);
    ResumeRequest r;
    try {
        if (!w.empty() && w.back() == '%') {
            r.kind = ResumeRequest::Kind::GotoPercent;
            r.value = std::stoull(w.substr(0, w.size() - 1));
            if (r.value > 100)
                throw std::out_of_range("percent");
        } else {
            r.kind = ResumeRequest::Kind::GotoEvent;
            size_t used = 0;
            r.value = std::stoull(w, &used);
            if (used != w.size())
                throw std::invalid_argument("event");
        }
    } catch (const std::exception&) {
        error = "goto needs an event number or a percentage, such as `goto 1200` or `goto 50%`";
        return std::nullopt;
    }
    return r;
}

namespace {

// Whether a move can be made; the reason it cannot otherwise.
std::string check_travel(DebugSession& session, const ResumeRequest& r)
{
    if (r.kind == ResumeRequest::Kind::GotoEvent && session.total_events() && r.value >= session.total_events())
        return "the recording has " + std::to_string(session.total_events()) + " events (0 to " +
               std::to_string(session.total_events() - 1) + ")";
    if (r.kind == ResumeRequest::Kind::GotoCheckpoint && r.value != 0) {
        for (const auto& [id, where] : session.list_checkpoints())
            if (id == r.value)
                return "";
        return "no checkpoint " + std::to_string(r.value) + " (see `info checkpoints`)";
    }
    return "";
}

} // namespace

std::optional<std::string> travel_error(DebugSession& session, const ResumeRequest& r)
{
    std::string why = check_travel(session, r);
    if (why.empty())
        return std::nullopt;
    return why;
}

MonitorResult run_monitor_command(DebugSession& session, const std::string& raw)
{
    std::string command = trim(raw);
    std::istringstream words(command);
    std::string verb;
    words >> verb;
    std::string rest;
    std::getline(words, rest);
    rest = trim(rest);
    MonitorResult out;
    if (verb == "check-goto" || verb == "check-restart") {
        // For rewind's gdb commands: validate a move before `starti` makes it.
        std::string error;
        std::optional<ResumeRequest> r;
        if (verb == "check-goto") {
            r = parse_goto(rest, error);
        } else {
            r = ResumeRequest{ResumeRequest::Kind::GotoCheckpoint, 0};
            try {
                r->value = rest.empty() ? 0 : std::stoull(rest);
            } catch (const std::exception&) {
                r.reset();
                error = "restart needs a checkpoint number (see `info checkpoints`)";
            }
        }
        if (r)
            error = check_travel(session, *r);
        out.output = error.empty() ? "ok\n" : error + "\n";
        return out;
    }
    if (verb == "when") {
        out.output =
            "At " + session.describe_position() + ", thread " + std::to_string(session.current_thread()) + ".\n";
    } else if (verb == "goto") {
        std::string error;
        out.travel = parse_goto(rest, error);
        if (out.travel)
            error = check_travel(session, *out.travel);
        if (!error.empty())
            out.travel.reset();
        out.output = out.travel ? "" : error + "\n";
    } else if (verb == "checkpoint") {
        try {
            uint64_t id = session.add_checkpoint();
            out.output = "Checkpoint " + std::to_string(id) + " at " + session.describe_position() + ".\n";
        } catch (const ReplayError& e) {
            out.output = std::string(e.summary()) + "\n";
        }
    } else if (verb == "info" && trim(rest) == "checkpoints") {
        auto list = session.list_checkpoints();
        if (list.empty())
            out.output = "No checkpoints.\n";
        for (const auto& [id, where] : list)
            out.output += std::to_string(id) + "  " + where + "\n";
    } else if (verb == "restart") {
        ResumeRequest r;
        r.kind = ResumeRequest::Kind::GotoCheckpoint;
        if (!rest.empty()) {
            try {
                r.value = std::stoull(rest);
            } catch (const std::exception&) {
                out.output = "restart needs a checkpoint number (see `info checkpoints`)\n";
                return out;
            }
            bool known = false;
            for (const auto& [id, where] : session.list_checkpoints())
                known = known || id == r.value;
            if (!known && r.value != 0) {
                out.output = "No checkpoint " + rest + " (see `info checkpoints`).\n";
                return out;
            }
        }
        out.travel = r;
    } else if (verb == "delete" && rest.rfind("checkpoint", 0) == 0) {
        std::string n = trim(rest.substr(10));
        try {
            out.output = session.delete_checkpoint(std::stoull(n)) ? "Deleted checkpoint " + n + ".\n"
                                                                   : "No checkpoint " + n + ".\n";
        } catch (const std::exception&) {
            out.output = "delete checkpoint needs a number\n";
        }
    } else {
        out.output = kHelp;
    }
    return out;
}

} // namespace rw::replay
