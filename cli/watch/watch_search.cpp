#include "watch_search.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "expression_check.h"
#include "nlohmann/json.hpp"
#include "usage_error.h"
#include "steady_now.h"
#include "watch_positions.h"

namespace rw::cli {
using namespace watch_text;
namespace {

struct NotDivisible {};

} // namespace

WatchSearch::WatchSearch(GdbMi& gdb, WatchOptions options) : gdb_(gdb), options_(std::move(options)) {}

void WatchSearch::status(const std::string& what)
{
    if (options_.progress)
        options_.progress(fmt::format("probe {}: {}", probes_, what));
}

std::string WatchSearch::tool(const std::string& command)
{
    here_.clear(); // every tool command may move the replay
    auto sent = steady_now();
    MiResult r = gdb_.console("monitor " + command);
    if (!r.ok())
        throw std::runtime_error("the replay server failed on `" + command + "`: " + r.error());
    auto fail = [&](const std::string& why) -> std::string {
        if (why.find("belongs to is gone") != std::string::npos)
            throw SnapshotGone(why);
        throw std::runtime_error(why);
    };
    // The reply is the last line of JSON the server printed.
    std::string json = last_json_line(r.console);
    if (json.empty())
        return fail("the replay server gave no answer to `" + command + "`: " + r.console);
    static const bool trace = std::getenv("REWIND_DEBUG") != nullptr;
    if (trace)
        std::fprintf(stderr, "[watch] %.3f s: %s -> %s\n", std::chrono::duration<double>(steady_now() - sent).count(),
                     command.c_str(), json.c_str());
    auto j = nlohmann::json::parse(json);
    if (j.contains("error"))
        return fail(j["error"].get<std::string>());
    return json;
}

void WatchSearch::hold(const std::vector<std::string>& positions)
{
    std::vector<std::string> anchored;
    for (const auto& p : positions)
        if (p.find(":a") != std::string::npos && std::find(anchored.begin(), anchored.end(), p) == anchored.end())
            anchored.push_back(p);
    if (anchored == held_)
        return;
    std::string command = "rw-keep";
    for (const auto& p : anchored)
        command += " " + p;
    tool(command);
    held_ = anchored;
}

std::string WatchSearch::go(const std::string& position)
{
    if (!here_.empty() && position == here_)
        return here_; // evaluations run in copies: the replay is still there
    return arrived(nlohmann::json::parse(tool("rw-goto " + position))["position"].get<std::string>());
}

const std::string& WatchSearch::arrived(const std::string& position)
{
    // gdb keeps registers, frames and stack memory of the last stop: the
    // replay moved under it.
    gdb_.console("maintenance flush register-cache");
    gdb_.console("maintenance flush dcache");
    here_ = position;
    return here_;
}

double WatchSearch::running_time(const std::string& from, const std::string& to)
{
    if (auto it = running_times_.find({from, to}); it != running_times_.end())
        return it->second;
    auto j = nlohmann::json::parse(tool("rw-count " + from + " " + to));
    double seconds = j["seconds"].get<double>();
    running_times_[{from, to}] = seconds;
    arrived(j["position"].get<std::string>()); // a count ends at `to`: no need to go there again
    return seconds;
}

void WatchSearch::load_program(const std::string& program)
{
    // The search stays after the process's last exec (the history begins
    // there), so the program at the bad end is the one EXPR is about: `sh -c
    // 'exec prog'`, `env`, a script's interpreter, a version manager's shim.
    if (program.empty() || program == program_ || options_.sysroot.empty())
        return;
    MiResult r = gdb_.console("file " + options_.sysroot + program);
    if (!r.ok())
        throw std::runtime_error("gdb cannot load " + program + ", the program at " + here_ + ": " + r.error());
    program_ = program;
}

MiResult WatchSearch::in_scope(const std::string& mi_command)
{
    if (auto why = scope_.select(gdb_)) {
        MiResult r;
        r.result_class = "error";
        r.values.kind = MiValue::Kind::Tuple;
        r.values.items.push_back({"msg", MiValue{MiValue::Kind::String, *why, {}}});
        return r;
    }
    MiResult r = gdb_.command(mi_command + " " + mi_quote(scope_.expression()));
    ExpressionScope::restore(gdb_);
    return r;
}

void WatchSearch::note_other_meanings(const std::string& position)
{
    for (const std::string& other : scope_.other_meanings_here(gdb_)) {
        std::string name = other.substr(0, other.find(':'));
        other_meanings_.try_emplace(name, other + ", at " + position);
    }
}

WatchSearch::Value WatchSearch::probe(const std::string& position)
{
    go(position);
    if (auto it = seen_.find(position); it != seen_.end())
        return it->second; // the replay is deterministic: same place, same value
    probes_++;
    status("at " + position);
    MiResult r = in_scope("-data-evaluate-expression");
    note_other_meanings(position);
    Value v;
    v.ok = r.ok();
    if (r.ok()) {
        v.text = r.values.str("value");
    } else {
        // gdb's explanations run over several lines; the first says it.
        std::string why = r.error().substr(0, r.error().find('\n'));
        if (why.find("signaled while in a function called from GDB") != std::string::npos)
            why = "a function it calls crashed";
        v.text = "<cannot be evaluated: " + why + ">";
        v.why = why;
        unevaluable_++;
        // Inside a call EXPR's own functions cannot run through (malloc
        // holding its lock, a half-done update): which side of the change
        // is it on? Where main gets control back, the call is over. Before
        // the change there (or where that cannot be reached), it counts as
        // before; after it, as after: malloc's internals after the change
        // would otherwise pull the search past it.
        if (!bad_.empty() && !settling_) {
            settling_ = true;
            std::vector<Frame> frames = frames_at(position);
            if (frames.size() >= 2 && frames.back().function == "main") {
                try {
                    Value there = probe(with_segment(position, "b" + addr_text(frames.back().pc) + "x1"));
                    v.after_change = there.ok && there.text == bad_;
                } catch (const std::runtime_error&) {
                }
            }
            settling_ = false;
            go(position);
        }
    }
    seen_[position] = v;
    probe_log_.emplace_back(position, v.text);
    // Good positions only move later as the search narrows: the last one
    // probed is the latest seen.
    if (v.ok && !bad_.empty() && v.text != bad_)
        last_evaluable_ = std::make_pair(position, v);
    return v;
}

std::optional<std::string> WatchSearch::end_position()
{
    const std::string& at = options_.at;
    auto status = nlohmann::json::parse(tool("rw-status"));
    uint64_t begin = event_of(status["begin"].get<std::string>());
    uint64_t events = status["events"].get<uint64_t>();
    if (at == "end") {
        walk_to(begin, events - 1);
        return go("end");
    }
    if (!at.empty() && at.back() == '%') {
        auto e = event_at(at, begin, events - 1);
        if (e)
            walk_to(begin, *e);
        return e ? std::optional(std::to_string(*e)) : std::nullopt;
    }
    try {
        walk_to(begin, event_of(at));
    } catch (const std::logic_error&) {
        // not a position: go() says so
    }
    return go(at);
}

WatchReport WatchSearch::run()
{
    auto start = steady_now();
    WatchReport report;
    auto finish = [&]() -> WatchReport {
        report.probes = probes_;
        report.probe_log = probe_log_;
        report.unevaluable = unevaluable_;
        report.seconds = std::chrono::duration<double>(steady_now() - start).count();
        report.scope = scope_.scope();
        report.names = scope_.names();
        for (const auto& [name, other] : other_meanings_)
            report.other_meanings.push_back(other);
        return report;
    };
    for (const char* setting :
         {"set unwindonsignal on", "set confirm off", "set pagination off", "set width 0", "set print pretty off"})
        gdb_.console(setting);

    auto at = end_position();
    if (!at)
        throw std::runtime_error("--at " + options_.at + " is not a position of this recording");
    std::string bad_position = go(*at);
    report.at = bad_position;
    auto status_json = nlohmann::json::parse(tool("rw-status"));
    here_ = bad_position; // (rw-status does not move the replay)
    load_program(status_json.value("program", ""));
    gdb_.console("sharedlibrary");
    // The names mean, at every probe, what they mean for the user: in the
    // frame at an exact position (from `when`, or where reverse-watch was
    // asked), else in main's scope (an event or a percentage stands inside
    // a library's syscall wrapper, whose names the user never saw).
    scope_ = ExpressionScope::resolve(gdb_, options_.expr, options_.at.find(':') != std::string::npos);
    Value end = probe(bad_position);
    if (!end.ok) {
        // (The check before the replay could not tell: the program had no
        // symbols there, or only the one exec'd since has the names.)
        if (auto why = parse_error(gdb_, options_.expr))
            throw UsageError("cannot parse the expression " + options_.expr + ": " + *why);
        report.outcome = WatchReport::Outcome::Unevaluable;
        report.message = "cannot evaluate " + options_.expr + " at " + bad_position +
                         (program_.empty() ? "" : " (the process runs " + program_ + " there)") + ": " + end.text;
        return finish();
    }
    bad_ = end.text;
    report.value_after = bad_;
    soft_counting_ = status_json.value("counting", "") == "int3";
    end_pieces_ = watched_pieces(bad_position);

    uint64_t begin = event_of(status_json["begin"].get<std::string>());
    uint64_t bad_event = event_of(bad_position);

    // The left end: the beginning (or --from), or the latest landmark where EXPR was good.
    uint64_t good_event = begin;
    uint64_t known_bad = bad_event; // the earliest boundary after good_event seen bad
    if (!options_.from.empty()) {
        auto from = event_at(options_.from, begin, bad_event);
        if (!from)
            throw std::runtime_error("--from " + options_.from + " is not an event or a percentage between the " +
                                     "start (event " + std::to_string(begin) + ") and --at (" + bad_position + ")");
        good_event = *from;
        Value v = probe(std::to_string(good_event));
        if (is_bad(v)) {
            report.outcome = WatchReport::Outcome::NoChange;
            report.message = fmt::format("{} is {} at --from {} (event {}) as at {}: nothing to find between them",
                                         options_.expr, bad_, options_.from, good_event, bad_position);
            return finish();
        }
    }
    // The same value at the start as at --at: it came and went (below).
    bool came_and_went = options_.from.empty() && is_bad(probe(std::to_string(begin)));
    if (options_.from.empty() && !came_and_went) {
        // The change asked for is the last one before --at. An expression
        // that goes back and forth (a buffer filled and flushed, a flag set
        // and cleared) changes many times, and a bisection between the
        // start and --at finds any one of them. Looking back from --at
        // first, at an eighth, a quarter and half of the recorded time,
        // puts the good end after all changes but the last ones where it
        // can (and a change in the last eighth costs one probe for three
        // bits).
        for (uint64_t e : looking_back(begin, bad_event)) {
            if (!is_bad(probe(std::to_string(e)))) {
                good_event = e;
                break;
            }
            known_bad = e; // the bisection need not look past it
        }
    }
    std::optional<Interval> inside; // the last change, found inside a stretch
    if (came_and_went) {
        // The same value at the start as at --at: it came and went. Its
        // last change is the one asked for, nearest --at: inside the
        // stretches before --at first (their boundaries may all have the
        // bad value, the changes between them), then over boundaries
        // farther back; every level of the search looks back from its bad
        // end first.
        latest_first_ = true;
        uint64_t looked = 0;
        inside = last_change_inside(begin, bad_position, looked);
        std::optional<uint64_t> latest_good;
        if (!inside && bad_event - begin > looked)
            latest_good = gallop_events_back(begin, bad_event - looked, known_bad);
        if (!latest_good && !inside) {
            report.outcome = WatchReport::Outcome::NoChange;
            report.message = fmt::format(
                "{} is {} at the start (event {}), at {}, inside the {} stretches before it and at every event "
                "boundary looked at back from there: no change was found. If it differed somewhere in between, "
                "start there: rewind watch --from EVENT|PCT% (an event or a percentage where it is not {})",
                options_.expr, bad_, begin, bad_position, looked, bad_);
            return finish();
        }
        if (latest_good) {
            report.later_change = "event " + std::to_string(*latest_good);
            good_event = *latest_good;
        }
    }
    if (inside) {
        report.later_change = inside->good;
        report.outcome = WatchReport::Outcome::Found;
        // (A plain boundary after it: the event made the change.)
        report.what = inside->bad.find(':') == std::string::npos ? event_what(std::to_string(event_of(inside->bad) - 1))
                                                                 : "instruction";
        describe(report, *inside);
        return finish();
    }

    // Event boundaries, then the code of one stretch.
    Interval in = search_events(good_event, bad_position, bad_event, known_bad);
    if (in.bad.find(':') == std::string::npos && event_of(in.bad) == event_of(in.good) + 1) {
        // The event between them made the change (in.good is its boundary).
        std::optional<std::string> at_event = stretch_end(in.good);
        if (at_event)
            running_time(in.good, *at_event); // the first thing the search of that stretch needs; and it goes there
        if (at_event && is_bad(probe(*at_event))) {
            in = search_stretch({in.good, *at_event});
            if (latest_first_)
                in = latest_in_tail(in, last_segment(*at_event));
            report.what = "instruction";
        } else {
            // The event itself: what the kernel did (a syscall's results, a
            // signal's delivery), or another process or thread.
            if (at_event)
                in.good = *at_event;
            report.what = event_what(in.good);
        }
    } else {
        in = search_stretch(in);
        report.what = "instruction";
    }
    report.outcome = WatchReport::Outcome::Found;
    describe(report, in);
    return finish();
}

std::string WatchSearch::event_what(const std::string& boundary)
{
    auto ev = nlohmann::json::parse(tool("rw-event " + std::to_string(event_of(boundary))));
    std::string kind = ev["kind"].get<std::string>();
    return kind == "syscall"  ? "syscall " + ev["name"].get<std::string>() + "()"
           : kind == "signal" ? "signal " + ev["name"].get<std::string>() + " delivered"
                              : kind + " event " + ev["index"].dump() + " of thread " + ev["tid"].dump();
}

std::optional<std::string> WatchSearch::stretch_end(const std::string& boundary)
{
    auto ev = nlohmann::json::parse(tool("rw-event " + boundary));
    std::string kind = ev["kind"].get<std::string>();
    if (!ev["debugged"].get<bool>())
        return std::nullopt; // another process's or thread's event
    if (kind == "syscall" && !ev["child_return"].get<bool>())
        return with_segment(boundary, "b" + addr_text(ev["ip"].get<uint64_t>() - 2) + "x1");
    if (kind == "rdtsc" || kind == "sync")
        // (a sync event of a parallel trace: its thread arrives at the
        // call's entry at the end of the code it ran since its last event)
        return with_segment(boundary, "b" + addr_text(ev["ip"].get<uint64_t>()) + "x1");
    if (kind == "signal" || kind == "preempt")
        return with_segment(boundary, "e"); // a preemption's state is its thread's code's
    return std::nullopt;
}

std::vector<WatchSearch::Frame> WatchSearch::frames_at(const std::string& position)
{
    // A position is one state of the program: each division of an interval
    // asks for the frames at both its ends again.
    if (auto it = frames_.find(position); it != frames_.end())
        return it->second;
    go(position);
    MiResult frames = gdb_.command("-stack-list-frames 0 64");
    const MiValue* stack = frames.ok() ? frames.values.get("stack") : nullptr;
    std::vector<Frame> out;
    for (size_t i = 0; stack && i < stack->items.size(); i++) {
        const MiValue& frame = stack->items[i].second;
        std::string addr = frame.str("addr");
        out.push_back({frame.str("func"), addr.empty() ? 0 : std::stoull(addr, nullptr, 16)});
    }
    frames_[position] = out;
    return out;
}

std::vector<uint64_t> WatchSearch::call_returns(const Interval& in)
{
    std::vector<Frame> at_good = frames_at(in.good), at_bad = frames_at(in.bad);
    if (at_good.empty() || at_bad.empty() || at_good.back().function != at_bad.back().function)
        return {};
    auto& known = call_sites_[at_good.back().function];
    if (known.empty()) {
        MiResult r = gdb_.command("-data-disassemble -a 0x" + addr_text(at_good.back().pc) + " -- 0");
        const MiValue* insns = r.ok() ? r.values.get("asm_insns") : nullptr;
        for (size_t i = 0; insns && i + 1 < insns->items.size(); i++)
            if (insns->items[i].second.str("inst").rfind("call", 0) == 0)
                known.push_back(std::stoull(insns->items[i + 1].second.str("address"), nullptr, 16));
    }
    std::vector<uint64_t> out;
    for (uint64_t a : known)
        if (std::find(used_.begin(), used_.end(), a) == used_.end())
            out.push_back(a);
    return out;
}

const WatchSearch::FunctionCalls& WatchSearch::calls_in(uint64_t pc)
{
    if (auto it = function_calls_.find(pc); it != function_calls_.end())
        return it->second;
    FunctionCalls& f = function_calls_[pc];
    MiResult r = gdb_.command("-data-disassemble -a 0x" + addr_text(pc) + " -- 0");
    const MiValue* insns = r.ok() ? r.values.get("asm_insns") : nullptr;
    for (size_t i = 0; insns && i + 1 < insns->items.size(); i++) {
        std::string inst = insns->items[i].second.str("inst");
        if (inst.rfind('j', 0) == 0 && inst.find('*') == std::string::npos) {
            // "jne    0x5555555555b0 <main+96>": a loop's back edge.
            size_t hex = inst.find("0x");
            uint64_t here = std::stoull(insns->items[i].second.str("address"), nullptr, 16);
            uint64_t to = hex == std::string::npos ? 0 : std::stoull(inst.substr(hex), nullptr, 16);
            if (to && to < here && std::find(f.loop_heads.begin(), f.loop_heads.end(), to) == f.loop_heads.end())
                f.loop_heads.push_back(to);
            continue;
        }
        if (inst.rfind("call", 0) != 0)
            continue;
        f.returns.push_back(std::stoull(insns->items[i + 1].second.str("address"), nullptr, 16));
        // "call   0x555555555449 <add_shortcut>": a direct call, not through the PLT.
        size_t hex = inst.find("0x");
        if (hex != std::string::npos && inst.find('*') == std::string::npos && inst.find("@plt") == std::string::npos) {
            uint64_t to = std::stoull(inst.substr(hex), nullptr, 16);
            if (std::find(f.targets.begin(), f.targets.end(), to) == f.targets.end())
                f.targets.push_back(to);
        }
    }
    return f;
}

std::vector<uint64_t> WatchSearch::callee_returns(const Interval& in)
{
    std::vector<Frame> at_good = frames_at(in.good);
    if (at_good.empty() || at_good.front().pc == 0)
        return {};
    constexpr size_t kMost = 24;   // each three cost one more run of the stretch
    constexpr size_t kCallees = 8; // functions looked into
    std::vector<uint64_t> out;
    auto add = [&](const std::vector<uint64_t>& from) {
        for (uint64_t a : from)
            if (out.size() < kMost && std::find(used_.begin(), used_.end(), a) == used_.end() &&
                std::find(out.begin(), out.end(), a) == out.end())
                out.push_back(a);
    };
    // And the heads of their loops: a stretch that is a loop without calls
    // (a search through an array, a copy) is divided into its rounds.
    // (Not where int3s count: a loop head runs too often to count that
    // way, and each try would run to the count's cap first.)
    // And the entries of the functions they call: a descent into a deep
    // recursion makes calls but returns from none (each level of
    // descend(depth + 1) runs the entry once, and no return address).
    FunctionCalls here = calls_in(at_good.front().pc);
    add(here.returns);
    add(here.targets);
    if (!soft_counting_)
        add(here.loop_heads);
    for (size_t i = 0; i < here.targets.size() && i < kCallees; i++) {
        const FunctionCalls& callee = calls_in(here.targets[i]);
        add(callee.returns);
        add(callee.targets);
        if (!soft_counting_)
            add(callee.loop_heads);
    }
    return out;
}

std::optional<WatchSearch::Interval> WatchSearch::divide(const Interval& in, const std::vector<uint64_t>&)
{
    // A bad end that is the m-th execution of an instruction after the good
    // end (m > 1) is already counted: its executions divide the interval,
    // with no run to count them. (In a loop without calls, where counting
    // with int3s gives up, this is the only division there is.)
    unsigned long long own = 0, own_count = 0;
    if (std::sscanf(last_segment(in.bad).c_str(), "b%llxx%llu", &own, &own_count) == 2 && own_count > 1 &&
        with_segment(in.good, last_segment(in.bad)) == in.bad) {
        auto at = [&](uint64_t k) {
            return k == 0 ? in.good : with_segment(in.good, "b" + addr_text(own) + "x" + std::to_string(k));
        };
        uint64_t lo = bisect_executions(0, own_count, at, [&](uint64_t l, uint64_t h) {
                          return fmt::format("executions {}..{} of {} of {:#x}", l, h, own_count, own);
                      }).first;
        return Interval{at(lo), with_segment(at(lo), "b" + addr_text(own) + "x1")};
    }
    // Return addresses of the frames live at either end of the interval,
    // the outermost first: their executions split the interval into calls.
    std::vector<uint64_t> returns;
    for (const std::string& end : {in.good, in.bad}) {
        std::vector<Frame> frames = frames_at(end);
        std::vector<uint64_t> here;
        // Frame 0's pc too: an end settled where a loop's call returns rests on it.
        for (size_t i = 0; i < frames.size(); i++) {
            uint64_t a = frames[i].pc;
            if (a != 0 && std::find(used_.begin(), used_.end(), a) == used_.end() &&
                std::find(returns.begin(), returns.end(), a) == returns.end() &&
                std::find(here.begin(), here.end(), a) == here.end())
                here.insert(here.begin(), a);
        }
        returns.insert(returns.end(), here.begin(), here.end());
    }
    // Where the calls of the outermost function live at both ends return:
    // the call that made the change may have returned before either end.
    std::vector<uint64_t> sites = call_returns(in);
    returns.insert(returns.begin(), sites.begin(), sites.end());
    // The bad end's own instruction (its first execution: `own` was not set
    // above) counts only the end itself: no division.
    std::erase(returns, static_cast<uint64_t>(own));
    // Four debug registers: the counters and the end's target, and in a
    // stretch that ends in a preemption the replay's own breakpoint too.
    auto ev = nlohmann::json::parse(tool("rw-event " + std::to_string(event_of(in.good))));
    size_t per_count = ev["kind"] == "preempt" ? 2 : 3;
    std::optional<std::pair<uint64_t, uint64_t>> best; // address, count
    bool deeper = false;
    for (size_t i = 0;; i += per_count) {
        if (best && best->second >= 2)
            break;
        if (i >= returns.size()) {
            // Nothing at this level runs in the stretch: look inside the calls.
            if (best || deeper)
                break;
            deeper = true;
            std::vector<uint64_t> more = callee_returns(in);
            for (uint64_t a : more)
                if (a != own && std::find(returns.begin(), returns.end(), a) == returns.end())
                    returns.push_back(a);
            if (i >= returns.size())
                break;
        }
        std::string cmd = "rw-count " + in.good + " " + in.bad;
        std::vector<uint64_t> group(returns.begin() + static_cast<long>(i),
                                    returns.begin() + static_cast<long>(std::min(i + per_count, returns.size())));
        for (uint64_t a : group)
            cmd += " " + addr_text(a);
        status("counting calls in " + in.good + " .. " + in.bad);
        nlohmann::json counts;
        try {
            counts = nlohmann::json::parse(tool(cmd))["counts"];
        } catch (const std::runtime_error& e) {
            // Counted by int3s (no debug registers), one of them ran too
            // often to be worth it: try the next ones.
            if (std::string(e.what()).find("counting stopped") == std::string::npos)
                throw;
            continue;
        }
        for (size_t k = 0; k < group.size(); k++) {
            uint64_t c = counts[k].get<uint64_t>();
            if (c >= 1 && (!best || (best->second < 2 && c >= 2)))
                best = std::make_pair(group[k], c);
        }
    }
    if (!best)
        return std::nullopt;
    auto [x, c] = *best;
    used_.push_back(x);
    // Binary search over the executions of x: P(0) = good, P(k) its k-th execution, P(c+1) = bad.
    auto at = [&](uint64_t k) {
        return k == 0 ? in.good : k > c ? in.bad : with_segment(in.good, "b" + addr_text(x) + "x" + std::to_string(k));
    };
    auto [lo, hi] = bisect_executions(0, c + 1, at, [&](uint64_t l, uint64_t h) {
        return fmt::format("calls {}..{} of {} returning to {:#x}", l, h, c, x);
    });
    // The next interval starts at its good end, so that its bad end is that and one segment.
    Interval next{at(lo), ""};
    if (hi <= c) {
        next.bad = with_segment(next.good, "b" + addr_text(x) + "x1");
        return next;
    }
    std::string b = last_segment(in.bad);
    if (lo == 0) {
        next.bad = in.bad;
        return next;
    }
    unsigned long long y = 0, m = 0;
    if (std::sscanf(b.c_str(), "b%llxx%llu", &y, &m) == 2) {
        // The bad end is the m-th execution of y after the old start: count those before the new one.
        uint64_t before = y == x ? lo : 0;
        if (y != x) {
            try {
                before = nlohmann::json::parse(
                             tool("rw-count " + in.good + " " + next.good + " " + addr_text(y)))["counts"][0]
                             .get<uint64_t>();
            } catch (const std::runtime_error&) {
                throw NotDivisible{};
            }
        }
        next.bad = with_segment(next.good, "b" + addr_text(y) + "x" + std::to_string(m - before));
        return next;
    }
    if (b == "e") {
        next.bad = with_segment(next.good, "e");
        return next;
    }
    if (std::sscanf(b.c_str(), "s%llu", &m) == 1) {
        uint64_t steps = nlohmann::json::parse(tool("rw-steps " + in.good + " " + next.good))["steps"].get<uint64_t>();
        next.bad = with_segment(next.good, "s" + std::to_string(m - steps));
        return next;
    }
    throw NotDivisible{};
}

WatchSearch::Interval WatchSearch::search_code(Interval in)
{
    for (;;) {
        std::optional<Interval> next;
        try {
            next = divide(in, used_);
        } catch (const NotDivisible&) {
            next.reset();
        }
        if (!next || (next->good == in.good && next->bad == in.bad))
            return step_search(in);
        in = *next;
    }
}

WatchSearch::Interval WatchSearch::step_search(const Interval& in)
{
    status("counting instructions in " + in.good + " .. " + in.bad);
    uint64_t n = nlohmann::json::parse(tool("rw-steps " + in.good + " " + in.bad))["steps"].get<uint64_t>();
    auto at = [&](uint64_t j) {
        return j == 0 ? in.good : j >= n ? in.bad : with_segment(in.good, "s" + std::to_string(j));
    };
    auto [lo, hi] =
        bisect(0, n, at, [&](uint64_t l, uint64_t h) { return fmt::format("instructions {}..{} of {}", l, h, n); });
    return {at(lo), at(hi)};
}

void WatchSearch::describe(WatchReport& report, const Interval& found)
{
    report.before = found.good;
    report.after = found.bad;
    // Confirm both sides, as the search saw them.
    Value after = probe(found.bad);
    Value before = probe(found.good);
    if (!is_bad(after) || is_bad(before))
        throw std::runtime_error("the change did not reproduce at " + found.good + " / " + found.bad +
                                 " (the expression depends on something outside the recording?)");
    report.value_before = before.text;
    report.no_other_value_seen = !before.ok && !last_evaluable_;
    if (report.no_other_value_seen)
        report.unevaluable_why = before.why;
    if (!before.ok && last_evaluable_) {
        // Anchored positions name snapshots of this search only: say where
        // the program was instead.
        const std::string& at = last_evaluable_->first;
        go(at);
        MiResult f = gdb_.command("-stack-info-frame");
        const MiValue* frame = f.ok() ? f.values.get("frame") : nullptr;
        std::string where =
            frame ? fmt::format("in {} ({}:{})", frame->str("func", "??"), frame->str("file"), frame->str("line", "?"))
                  : "";
        report.last_evaluable_position = at.find(":a") == std::string::npos ? at : "";
        report.last_evaluable_where = where;
        report.last_evaluable_value = last_evaluable_->second.text;
        go(found.good); // back where the rest of the report is read
    }
    auto st = nlohmann::json::parse(tool("rw-status"));
    report.thread = st["thread"].get<uint64_t>();
    report.snapshots_let_go = st.value("snapshots_let_go", uint64_t(0));
    MiResult frame = gdb_.command("-stack-info-frame");
    if (const MiValue* f = frame.values.get("frame")) {
        report.pc = std::stoull(f->str("addr", "0"), nullptr, 16);
        report.function = f->str("func");
        report.file = f->str("file");
        report.object = f->str("from");
        report.line = std::stoi(f->str("line", "0"));
        std::ifstream src(f->str("fullname"));
        std::string text;
        for (int i = 1; src && std::getline(src, text); i++)
            if (i == report.line) {
                report.source_line = text;
                break;
            }
    }
    MiResult dis = gdb_.command(fmt::format("-data-disassemble -s {:#x} -e {:#x} -- 0", report.pc, report.pc + 1));
    if (const MiValue* insns = dis.values.get("asm_insns"); insns && !insns->items.empty())
        report.instruction = insns->items[0].second.str("inst");
    for (const auto& e : options_.prints) {
        std::string value = "<not known in any frame>";
        for (int level = 0; level < 16; level++) {
            if (!gdb_.command("-stack-select-frame " + std::to_string(level)).ok())
                break;
            MiResult v = gdb_.command("-data-evaluate-expression " + mi_quote(e));
            if (v.ok()) {
                value = v.values.str("value");
                break;
            }
        }
        gdb_.command("-stack-select-frame 0");
        report.printed.emplace_back(e, value);
    }
    MiResult bt = gdb_.console("backtrace 8");
    size_t start = 0;
    while (start < bt.console.size()) {
        size_t end = bt.console.find('\n', start);
        std::string line = bt.console.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!line.empty() && line[0] == '#')
            report.backtrace.push_back(line);
        else if (!line.empty() && !report.backtrace.empty() && (line[0] == ' ' || line[0] == '\t'))
            report.backtrace.back() += " " + line.substr(line.find_first_not_of(" \t"));
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
}

} // namespace rw::cli
