// rewind watch [TRACE] EXPR [--at POSITION] [--json]: where did EXPR become what it is?
#include <fmt/core.h>
#include <unistd.h>

#include <csignal>
#include <fstream>

#include "commands.h"
#include "replay_limits.h"
#include "json_bytes.h"
#include "gdb_launch.h"
#include "expression_check.h"
#include "gdb_mi.h"
#include "nlohmann/json.hpp"
#include "process_choice.h"
#include "process_tree.h"
#include "usage_error.h"
#include "trace.h"
#include "event_stream.h"
#include "trace_dir.h"
#include "timeline_svg.h"
#include "watch_search.h"

namespace rw::cli {
namespace {

// Exit statuses besides 0 (found), 1 (error) and 2 (usage).
constexpr int kNoChange = 4;
constexpr int kUnevaluable = 5;

class ProgressLine {
public:
    explicit ProgressLine(bool enabled) : enabled_(enabled) {}
    void show(const std::string& s)
    {
        if (!enabled_)
            return;
        std::string line = "rewind watch: " + s;
        if (line.size() > 100)
            line.resize(100);
        fmt::print(stderr, "\r{}\033[K", line);
        shown_ = true;
    }
    // Before any other output: the report, an error.
    void erase()
    {
        if (shown_)
            fmt::print(stderr, "\r\033[K");
        shown_ = false;
    }
    ~ProgressLine() { erase(); }

private:
    bool enabled_;
    bool shown_ = false;
};

// A syntax error is the user's whatever the recording holds: it is said
// before anything replays. The gdb that searches checks it on the program's
// file, then lets the file go (the replay names the program it runs).
void check_expression_syntax(GdbMi& gdb, const GdbSupport& support, const Trace& t, const std::string& expr)
{
    gdb.console("set sysroot " + support.sysroot());
    gdb.console("file " + support.sysroot() + t.meta().program);
    if (auto why = parse_error(gdb, expr))
        throw UsageError("cannot parse the expression " + expr + ": " + *why);
    gdb.console("file");
}

// For an EXPR that cannot be evaluated at `at`: where else it may make
// sense, the programs the watched process (0: the recorded program) execs
// after `at` and the other processes ("" if none).
std::string where_else(const Trace& t, Tid pid, const std::string& at)
{
    uint64_t event = std::strtoull(at.c_str(), nullptr, 10);
    std::string out;
    auto tree = process_tree(t);
    const RecordedProcess* p = pid ? find_process(tree, pid) : tree.empty() ? nullptr : &tree.front();
    if (!p)
        return out;
    for (const auto& x : p->execs)
        if (x.event > event)
            out += fmt::format("\n  the process execs {} at event {}: --at a position after it looks there", x.filename,
                               x.event);
    if (tree.size() > 1)
        out += "\n  --pid PID or --exec NAME looks in another process of the recording: " + list_processes(tree);
    return out;
}

// Said where the names could have been read otherwise: a name that means
// something else where some probes stood, or locals of one function.
void print_names(const std::string& expr, const WatchReport& r)
{
    std::string meanings;
    for (const auto& [name, what] : r.names)
        meanings += (meanings.empty() ? "" : ", ") + name + " is " + what;
    for (const auto& [name, what] : r.names)
        if (what.rfind("a local of ", 0) == 0) {
            fmt::print("note: {} is {} (resolved in {}); where that function is not running, {} counts as before "
                       "the change\n",
                       name, what, r.scope, expr);
            break;
        }
    if (!r.other_meanings.empty()) {
        fmt::print("note: {} kept one meaning at every probe, resolved in {}: {}. Where the replay stood, a name "
                   "meant something else:\n",
                   expr, r.scope, meanings);
        for (const auto& other : r.other_meanings)
            fmt::print("  {}\n", other);
    }
}

void print_human(const std::string& expr, const WatchReport& r, const std::string& limit)
{
    switch (r.outcome) {
    case WatchReport::Outcome::NoChange:
    case WatchReport::Outcome::Unevaluable:
        fmt::print("{}\n", r.message);
        break;
    case WatchReport::Outcome::Found:
        if (!r.last_evaluable_value.empty())
            fmt::print("{} was last seen as {} {}{}; after that it could not be evaluated until the change:\n", expr,
                       r.last_evaluable_value, r.last_evaluable_where,
                       r.last_evaluable_position.empty() ? "" : " at " + r.last_evaluable_position);
        std::string by = r.what == "instruction" ? fmt::format("in thread {}", r.thread)
                                                 : fmt::format("by the {} in thread {}", r.what, r.thread);
        if (r.no_other_value_seen) {
            // (A value that only became evaluable, as getenv before libc is
            // relocated: not a change of value the search can vouch for.)
            fmt::print("{} is {} from here on ({}); just before, it could not be evaluated ({}), and the search saw "
                       "no other value before it:\n",
                       expr, r.value_after, by, r.unevaluable_why);
        } else {
            fmt::print("{} changed from {} to {} {}, at\n", expr, r.value_before, r.value_after, by);
        }
        std::string where = !r.file.empty()     ? fmt::format(" ({}:{})", r.file, r.line)
                            : !r.object.empty() ? " from " + r.object
                                                : "";
        fmt::print("  {:#x} in {}{}: {}\n", r.pc, r.function.empty() ? "??" : r.function, where, r.instruction);
        if (!r.source_line.empty())
            fmt::print("  {:>5}  {}\n", r.line, r.source_line);
        for (const auto& f : r.backtrace)
            fmt::print("  {}\n", f);
        for (const auto& [e, v] : r.printed)
            fmt::print("  {} = {}\n", e, v);
        if (r.before.find(":a") == std::string::npos)
            fmt::print("before: {}   after: {}   (rewind watch --at, goto in rewind replay)\n", r.before, r.after);
        if (!r.later_change.empty())
            fmt::print("note: {} already had this value at the start; this is its last change (it was different "
                       "at {}).\n",
                       expr, r.later_change);
        break;
    }
    fmt::print("{} probes", r.probes);
    if (r.unevaluable)
        fmt::print(" ({} could not evaluate the expression; each counted as before or after the change as it was where "
                   "main got control back)",
                   r.unevaluable);
    fmt::print(", {:.2f} s\n", r.seconds);
    print_names(expr, r);
    if (r.snapshots_let_go)
        fmt::print("note: memory was short: the replay let {} of its snapshots go (each keeps the pages the program "
                   "wrote after it), and the search ran more of the recording again\n",
                   r.snapshots_let_go);
    if (!limit.empty())
        fmt::print("note: {}\n", limit);
}

nlohmann::json to_json(const std::string& expr, const WatchReport& r, const std::string& limit)
{
    nlohmann::json j;
    j["expression"] = expr;
    j["outcome"] = r.outcome == WatchReport::Outcome::Found      ? "found"
                   : r.outcome == WatchReport::Outcome::NoChange ? "no-change"
                                                                 : "unevaluable";
    if (!r.message.empty())
        j["message"] = r.message;
    if (r.outcome == WatchReport::Outcome::Found) {
        j["before"] = {{"position", r.before}, {"value", r.value_before}};
        j["after"] = {{"position", r.after}, {"value", r.value_after}};
        j["changed_by"] = r.what;
        j["thread"] = r.thread;
        j["pc"] = r.pc;
        j["instruction"] = r.instruction;
        j["function"] = r.function;
        j["file"] = r.file;
        j["line"] = r.line;
        j["object"] = r.object;
        j["source"] = r.source_line;
        j["backtrace"] = r.backtrace;
        nlohmann::json printed = nlohmann::json::object();
        for (const auto& [e, v] : r.printed)
            printed[e] = v;
        j["printed"] = printed;
        if (!r.later_change.empty())
            j["same_value_at_start"] = true;
        if (r.no_other_value_seen)
            j["no_other_value_seen"] = true;
        if (!r.last_evaluable_value.empty())
            j["last_evaluable"] = {{"position", r.last_evaluable_position},
                                   {"where", r.last_evaluable_where},
                                   {"value", r.last_evaluable_value}};
    }
    j["scope"] = r.scope;
    nlohmann::json names = nlohmann::json::object();
    for (const auto& [name, what] : r.names)
        names[name] = what;
    j["names"] = names;
    j["other_meanings"] = r.other_meanings;
    j["probes"] = r.probes;
    j["unevaluable_probes"] = r.unevaluable;
    j["snapshots_let_go"] = r.snapshots_let_go;
    j["seconds"] = r.seconds;
    if (!limit.empty())
        j["replay_limit"] = limit;
    return j;
}

// The search on a timeline of the recording: each probe where it stood,
// coloured by the value it saw, and the change found.
std::string search_svg(const std::string& expr, const WatchReport& r, uint64_t total_events)
{
    TimelineSvg svg(fmt::format("rewind watch {}: {} probes, {:.1f} s", expr, r.probes, r.seconds), total_events,
                    {"probes"});
    int k = 0;
    for (const auto& [position, value] : r.probe_log) {
        std::string colour = value.rfind("<cannot", 0) == 0 ? "#888" : value == r.value_after ? "#c0392b" : "#2c6fbb";
        svg.dot(0, position, colour, fmt::format("probe {}: {} = {}", ++k, expr, value));
    }
    if (r.outcome == WatchReport::Outcome::Found) {
        std::string file = r.file.substr(r.file.rfind('/') + 1);
        svg.dot(
            0, r.after, "#27ae60",
            fmt::format("the change: {} -> {} in {} ({}:{})", r.value_before, r.value_after, r.function, file, r.line));
    }
    return svg.str();
}

} // namespace

void add_watch(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("watch", "Find the instruction where an expression took its final value");
    struct Args {
        std::vector<std::string> positional; // [TRACE] EXPR
        std::string at = "end";
        std::string from;
        bool json = false;
        std::string gdb = "/usr/bin/gdb";
        std::string connect;
        std::vector<std::string> prints;
        bool no_landmarks = false;
        std::string svg;
        bool trust_landmarks = false;
        ProcessChoice process;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace_expr", a->positional, "[TRACE] EXPR: a trace (default: latest) and a gdb expression")
        ->required()
        ->expected(1, 2);
    cmd->add_option("--at", a->at,
                    "Where the expression has the value to explain: end (default), an event, PCT%, or a position "
                    "from `when`");
    cmd->add_option("--from", a->from,
                    "Search after this event or PCT% only: a start where the expression differs from its value at "
                    "--at (when it has that value at the start too)");
    a->process.add_options(cmd);
    cmd->add_flag("--json", a->json, "Print the result as JSON");
    cmd->add_flag("--no-landmarks", a->no_landmarks,
                  "Replay from the start, not from the trace's landmarks (rewind landmark)");
    add_trust_landmarks_flag(cmd, a->trust_landmarks);
    cmd->add_option("--svg", a->svg,
                    "Also draw the search in FILE: each probe on a timeline of the recording, and the change");
    cmd->add_option("--print", a->prints, "Also show this expression where the change happens (repeatable)");
    cmd->add_option("--gdb", a->gdb, "The gdb that evaluates the expression (default: /usr/bin/gdb)");
    cmd->add_option("--connect", a->connect,
                    "Search in a replay already served on HOST:PORT (rewind serve --port), and leave it at the "
                    "change");
    cmd->footer("EXPR is anything gdb can evaluate in the program, function calls included; calls run in\n"
                "throwaway copies. A probe where it cannot be evaluated counts as before the change.\n"
                "Exit status: 0 found, 4 the expression never changes, 5 it cannot be evaluated at --at,\n"
                "90-93 the replay failed (as for rewind replay), 1 the search failed otherwise (the message\n"
                "says why). Examples:\n"
                "  rewind watch latest 'has_cycle(g)'\n  rewind watch 'list_len(head) > 1000' --at 50%\n"
                "  rewind watch --exec tr latest 'n > 3'    (a child process; `rewind ps` lists them)");
    cmd->callback([a, &outcome] {
        std::string trace_arg = a->positional.size() == 2 ? a->positional[0] : "";
        std::string expr = a->positional.back();
        if (expr.empty())
            throw UsageError("the expression is empty");
        Trace t(resolve_trace(trace_arg.empty() ? std::nullopt : std::optional(trace_arg)));
        check_gdb(a->gdb);
        if (!a->connect.empty() && (a->process.pid || !a->process.exec.empty()))
            throw UsageError("--pid and --exec choose the process of a replay rewind starts; a replay served with "
                             "rewind serve (--connect) debugs the process it was given");
        std::vector<std::string> serve_options;
        Tid pid = a->process.resolve(t);
        if (pid)
            serve_options = {"--pid", std::to_string(pid)};
        if (a->no_landmarks)
            serve_options.push_back("--no-landmarks");
        if (a->trust_landmarks)
            serve_options.push_back("--trust-landmarks");
        GdbSupport support(t, serve_options);
        GdbMi gdb(a->gdb, {});
        check_expression_syntax(gdb, support, t, expr);
        std::string target = a->connect.empty() ? support.target_command() : "target extended-remote " + a->connect;
        for (const std::string& setup : std::vector<std::string>{"set remotetimeout 100000", target}) {
            MiResult r = gdb.console(setup);
            if (!r.ok())
                throw std::runtime_error("gdb: " + r.error());
        }
        ProgressLine progress(isatty(STDERR_FILENO));
        WatchOptions options;
        options.expr = expr;
        options.at = a->at;
        options.from = a->from;
        options.prints = a->prints;
        options.sysroot = support.sysroot();
        options.progress = [&](const std::string& s) { progress.show(s); };
        WatchSearch search(gdb, options);
        WatchReport report;
        try {
            report = search.run();
        } catch (const std::exception& e) {
            progress.erase(); // before main prints why
            rethrow_with_server_error(support, e);
        }
        progress.erase();
        if (report.outcome == WatchReport::Outcome::Unevaluable)
            report.message += where_else(t, pid, report.at);
        if (!a->svg.empty()) {
            std::ofstream out(a->svg);
            out << search_svg(expr, report, t.end() ? t.end()->events : 0);
            if (!out.flush())
                throw UsageError("cannot write " + a->svg);
        }
        std::string limit = parallel_replay_limit(t.meta().thread_mode);
        if (a->json)
            fmt::print("{}\n", dump_for_display(to_json(expr, report, limit), 2));
        else
            print_human(expr, report, limit);
        outcome.exit_code = report.outcome == WatchReport::Outcome::Found      ? 0
                            : report.outcome == WatchReport::Outcome::NoChange ? kNoChange
                                                                               : kUnevaluable;
    });
}

} // namespace rw::cli
