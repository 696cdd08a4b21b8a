#include "gdb_monitor.h"

#include "hw_breakpoint.h"
#include "json_bytes.h"

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "nlohmann/json.hpp"
#include "syscall_table.h"
#include "time_split.h"
#include "tracee.h"

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
  monitor goto EVENT|PCT%|POS   go to an event, a percentage of the recording, or a position
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
        if (w.find(':') != std::string::npos) {
            // A position as `when` or rewind watch print it.
            auto p = perfclock::Position::parse(w);
            if (!p)
                throw std::invalid_argument("position");
            r.kind = ResumeRequest::Kind::GotoPosition;
            r.from = *p;
        } else if (!w.empty() && w.back() == '%') {
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
        error = "goto needs an event number, a percentage or a position, such as `goto 1200`, `goto 50%` or "
                "`goto 1200:b401136x3`";
        return std::nullopt;
    }
    return r;
}

namespace {

// Whether a move can be made; the reason it cannot otherwise.
std::string check_travel(DebugSession& session, const ResumeRequest& r)
{
    if (r.kind == ResumeRequest::Kind::GotoPosition && r.from &&
        (r.from->event < session.beginning().event ||
         (session.total_events() && r.from->event >= session.total_events())))
        return "the recording has no event " + std::to_string(r.from->event);
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

namespace {

std::vector<std::string> words_of(const std::string& s)
{
    std::istringstream in(s);
    std::vector<std::string> out;
    for (std::string w; in >> w;)
        out.push_back(w);
    return out;
}

// Where user space ends on x86-64: a debug register cannot watch beyond.
constexpr uint64_t kUserSpaceEnd = 0x0000'8000'0000'0000ull;

// A trailing most=N: its number into r.most, and `end` before it.
std::string parse_most(const std::vector<std::string>& args, size_t& end, ResumeRequest& r)
{
    if (end <= 2 || args[end - 1].rfind("most=", 0) != 0)
        return "";
    try {
        r.most = std::stoull(args[end - 1].substr(5));
    } catch (const std::exception&) {
        return "not a number: " + args[end - 1];
    }
    end--;
    return "";
}

// Places: ADDR (hex), executions of the instruction there; fADDR, those of
// a function's entry and its calls' returns; wADDR.LEN, the writes to LEN
// bytes there.
std::string parse_places(const std::vector<std::string>& args, size_t begin, size_t end, ResumeRequest& r)
{
    for (size_t i = begin; i < end; i++) {
        bool write = args[i][0] == 'w';
        bool function = args[i][0] == 'f';
        try {
            size_t dot = 0;
            uint64_t addr = std::stoull(args[i].substr(write || function ? 1 : 0), &dot, 16);
            if (function)
                r.functions.push_back(addr);
            if (!write) {
                r.addrs.push_back(addr);
                continue;
            }
            if (args[i].size() < 3 + dot || args[i][1 + dot] != '.')
                throw std::invalid_argument("no length");
            uint32_t len = static_cast<uint32_t>(std::stoul(args[i].substr(2 + dot)));
            if ((len != 1 && len != 2 && len != 4 && len != 8) || addr % len != 0)
                return "a watched range is 1, 2, 4 or 8 bytes at an address they divide: " + args[i];
            if (addr + len > kUserSpaceEnd)
                return "not an address of the program's memory: " + args[i];
            r.writes.emplace_back(addr, len);
        } catch (const std::exception&) {
            return write ? "not a range (wADDR.LEN): " + args[i] : "not an address: " + args[i];
        }
    }
    return "";
}

// The rw-* commands: machine-readable probes for tools (rewind watch). Each
// reply is one line of JSON, {"error": "..."} when the command is wrong.
MonitorResult tool_command(DebugSession& session, const std::string& verb, const std::vector<std::string>& args)
{
    MonitorResult out;
    out.machine = true;
    auto fail = [&](const std::string& why) {
        out.output = dump_for_display(nlohmann::json{{"error", why}}) + "\n";
        out.travel.reset();
        return out;
    };
    auto position = [&](const std::string& text) -> std::optional<perfclock::Position> {
        auto p = perfclock::Position::parse(text);
        if (p &&
            (p->event < session.beginning().event || (session.total_events() && p->event >= session.total_events())))
            return std::nullopt;
        return p;
    };
    if (verb == "rw-status") {
        nlohmann::json j;
        j["position"] = session.position().serialize();
        j["begin"] = session.beginning().serialize();
        j["events"] = session.total_events();
        j["thread"] = session.current_thread();
        j["diverted"] = session.diverted();
        // The program the debugged process runs here (after its last exec):
        // a tool that moved the replay with rw-goto loads its symbols.
        j["program"] = session.program().executable;
        // How executions are counted: tools judge a count's "seconds" by it
        // (int3s stop at each execution, so their time is mostly traps).
        j["counting"] = perfclock::breakpoints_work() ? "debug registers" : "int3";
        j["snapshots_let_go"] = session.snapshots_let_go(); // memory was short
        // What a tool needs to start its own replay of this process (the
        // reverse-origin command runs rewind origin).
        j["trace"] = std::filesystem::absolute(session.trace().dir()).string();
        j["process"] = session.debugged_process();
        std::error_code ec;
        j["rewind"] = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        out.output = dump_for_display(j) + "\n";
        return out;
    }
    if (verb == "rw-keep") {
        // The positions a tool will come back to: their snapshots go last
        // where memory is short. Replaces the ones held before.
        std::vector<perfclock::Position> held;
        for (const auto& a : args) {
            auto p = position(a);
            if (!p)
                return fail("rw-keep takes positions: " + a);
            held.push_back(*p);
        }
        session.hold_anchors(held);
        out.output = dump_for_display(nlohmann::json{{"held", held.size()}}) + "\n";
        return out;
    }
    if (verb == "rw-split" && args.size() == 2) {
        // Where a bisection over events LO..HI halves the recorded time.
        uint64_t lo = 0, hi = 0;
        try {
            lo = std::stoull(args[0]);
            hi = std::stoull(args[1]);
        } catch (const std::exception&) {
            return fail("rw-split needs two event numbers");
        }
        if (hi < lo + 2 || (session.total_events() && hi >= session.total_events()))
            return fail("rw-split needs two events of this recording with at least one between them");
        bool by_time = false;
        double share = 0.5;
        uint64_t m = perfclock::split_by_time(lo, hi, session.running_times(), &by_time, &share);
        out.output = dump_for_display(nlohmann::json{{"event", m}, {"by_time", by_time}, {"share", share}}) + "\n";
        return out;
    }
    if (verb == "rw-event" && args.size() == 1) {
        // One event, as much as a tool needs to place it: kind, thread, instruction.
        uint64_t index = 0;
        try {
            index = std::stoull(args[0]);
        } catch (const std::exception&) {
            return fail("not an event number: " + args[0]);
        }
        auto e = session.event(index);
        if (!e)
            return fail("no event " + args[0]);
        nlohmann::json j;
        j["index"] = index;
        Tid tgid = 0;
        std::visit(
            [&](const auto& ev) {
                using T = std::decay_t<decltype(ev)>;
                j["tid"] = event_tid(Event{ev});
                if constexpr (std::is_same_v<T, SyscallEvent>) {
                    j["kind"] = "syscall";
                    j["name"] = syscall_name(ev.nr);
                    j["ip"] = ev.ip;
                    j["child_return"] = (ev.flags & kSyscallChildReturn) != 0;
                    // The memory it wrote (no watchpoint sees the kernel's writes).
                    nlohmann::json writes = nlohmann::json::array();
                    for (const auto& m : ev.memory)
                        if (m.dir == Direction::Out && m.length)
                            writes.push_back({m.addr, m.length});
                    j["writes"] = writes;
                    tgid = ev.tgid;
                } else if constexpr (std::is_same_v<T, RdtscEvent>) {
                    j["kind"] = "rdtsc";
                    j["ip"] = ev.ip;
                    tgid = session.program().tgid; // rdtsc events name only their thread
                } else if constexpr (std::is_same_v<T, RandomEvent>) {
                    j["kind"] = ev.seed ? "rdseed" : "rdrand";
                    j["ip"] = ev.ip;
                    tgid = session.program().tgid;
                } else if constexpr (std::is_same_v<T, SignalEvent>) {
                    j["kind"] = "signal";
                    j["name"] = signal_name(ev.signo);
                    j["delivery"] = ev.kind == SignalKind::Fault       ? "fault"
                                    : ev.kind == SignalKind::AtSyscall ? "at-syscall"
                                                                       : "in-code";
                    tgid = ev.tgid;
                } else if constexpr (std::is_same_v<T, ExecEvent>) {
                    j["kind"] = "exec";
                    tgid = ev.tgid;
                } else if constexpr (std::is_same_v<T, ExitEvent>) {
                    j["kind"] = "exit";
                    tgid = ev.tgid;
                } else if constexpr (std::is_same_v<T, ForkEvent>) {
                    j["kind"] = "fork";
                    tgid = ev.parent_tgid;
                } else if constexpr (std::is_same_v<T, PreemptEvent>) {
                    j["kind"] = "preempt";
                    j["ip"] = ev.regs[Registers::RIP];
                    tgid = session.program().tgid; // like rdtsc, a preemption names only its thread
                } else if constexpr (std::is_same_v<T, SyncEvent>) {
                    j["kind"] = "sync";
                    j["ip"] = ev.entry;
                    tgid = ev.tgid;
                } else {
                    j["kind"] = "note";
                }
            },
            *e);
        j["debugged"] = tgid == session.debugged_process();
        out.output = dump_for_display(j) + "\n";
        return out;
    }
    ResumeRequest r;
    if (verb == "rw-goto" && args.size() == 1) {
        if (args[0] == "end") {
            r.kind = ResumeRequest::Kind::GotoEnd;
        } else {
            r.kind = ResumeRequest::Kind::GotoPosition;
            r.from = args[0] == "begin" ? session.beginning() : position(args[0]).value_or(perfclock::Position{});
            if (args[0] != "begin" && !position(args[0]))
                return fail("not a position of this recording: " + args[0]);
        }
    } else if ((verb == "rw-count" && args.size() >= 2 && args.size() <= 6) ||
               (verb == "rw-steps" && args.size() >= 2 && args.size() <= 3)) {
        r.kind = verb == "rw-count" ? ResumeRequest::Kind::Count : ResumeRequest::Kind::Steps;
        r.from = position(args[0]);
        r.to = position(args[1]);
        if (!r.from || !r.to)
            return fail(verb + " needs two positions of this recording");
        // A cap on the writes counted (each costs a debug exception), or on
        // the instructions stepped.
        size_t places_end = args.size();
        if (std::string why = parse_most(args, places_end, r); !why.empty())
            return fail(why);
        if (places_end > 5 || (r.kind == ResumeRequest::Kind::Steps && places_end > 2))
            return fail(verb == "rw-steps" ? "rw-steps takes two positions and most=N"
                                           : "rw-count counts at most three places");
        if (std::string why = parse_places(args, 2, places_end, r); !why.empty())
            return fail(why);
        if (!r.functions.empty())
            return fail("fADDR is a place of rw-query only");
    } else if (verb == "rw-query" && args.size() >= 3) {
        // FROM (begin or an event) TO (end or a position) PLACE... [most=N]:
        // every execution of the places' instructions and every change of
        // their bytes, with the registers there. The replay is left at FROM.
        r.kind = ResumeRequest::Kind::Query;
        r.from = args[0] == "begin" ? session.beginning() : position(args[0]).value_or(perfclock::Position{});
        if (args[0] != "begin" && (!position(args[0]) || !r.from->path.empty()))
            return fail("a query starts at begin or at an event of this recording: " + args[0]);
        if (args[1] != "end") {
            r.to = position(args[1]);
            if (!r.to)
                return fail("not a position of this recording: " + args[1]);
        }
        size_t places_end = args.size();
        if (std::string why = parse_most(args, places_end, r); !why.empty())
            return fail(why);
        if (places_end > 2 && args[places_end - 1].rfind("with=", 0) == 0) {
            // with=xmm,rdi,…: xmm0-7 and where those registers point, at each stop.
            static const std::vector<std::string> pointers{"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
            std::istringstream items(args[--places_end].substr(5));
            for (std::string item; std::getline(items, item, ',');) {
                auto it = std::find(pointers.begin(), pointers.end(), item);
                if (item == "xmm")
                    r.query_with |= ResumeRequest::kWithXmm;
                else if (it != pointers.end())
                    r.query_with |= 1u << (1 + (it - pointers.begin()));
                else
                    return fail("with= takes xmm and argument registers (rdi, rsi, rdx, rcx, r8, r9): " + item);
            }
        }
        if (std::string why = parse_places(args, 2, places_end, r); !why.empty())
            return fail(why);
        if (r.writes.size() > 4 || r.addrs.size() > 64)
            return fail("a query watches at most 4 ranges (the debug registers) and 64 instructions");
    } else if (verb == "rw-back" && args.size() <= 1) {
        // The current thread's previous instruction; giving up past MOST stops.
        r.kind = ResumeRequest::Kind::ReverseStep;
        try {
            r.value = args.empty() ? 0 : std::stoull(args[0]);
        } catch (const std::exception&) {
            return fail("rw-back takes at most a number of stops");
        }
    } else if (verb == "rw-sample" && args.size() == 3) {
        r.kind = ResumeRequest::Kind::Sample;
        r.from = position(args[0]);
        try {
            r.value = std::stoull(args[1]);
            r.span_ns = std::stoull(args[2]) * 1000;
        } catch (const std::exception&) {
            return fail("rw-sample needs a position, a number of anchors and a span in microseconds");
        }
        if (!r.from || r.value == 0 || r.value > 200)
            return fail("rw-sample needs a position and 1 to 200 anchors");
    } else if (verb == "rw-label" && args.size() == 2) {
        r.kind = ResumeRequest::Kind::Label;
        r.from = position(args[0]);
        r.to = position(args[1]);
        if (!r.from || !r.to || !r.to->anchored())
            return fail("rw-label needs a position and an anchored position of the same stretch");
    } else {
        return fail("unknown or malformed tool command: " + verb);
    }
    out.travel = r;
    return out;
}

} // namespace

MonitorResult run_monitor_command(DebugSession& session, const std::string& raw)
{
    std::string command = trim(raw);
    std::istringstream words(command);
    std::string verb;
    words >> verb;
    std::string rest;
    std::getline(words, rest);
    rest = trim(rest);
    if (verb.rfind("rw-", 0) == 0) {
        auto args = words_of(rest);
        return tool_command(session, verb, args);
    }
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
        out.output = "At " + session.describe_position() + ", thread " + std::to_string(session.current_thread()) +
                     ".\nPosition " + session.position().serialize() + " (for `rewind watch --at`).\n";
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
