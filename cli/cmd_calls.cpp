// rewind calls [TRACE] FUNCTION [--json]: every call of a function in the
// recording, with its arguments, its caller and what it returned.
#include <fmt/core.h>

#include <set>

#include "commands.h"
#include "function_calls.h"
#include "json_bytes.h"
#include "query_replay.h"

namespace rw::cli {
namespace {

nlohmann::json place_json(const CodePlace& p)
{
    return {{"function", p.function}, {"file", p.file}, {"line", p.line}, {"object", p.object}};
}

nlohmann::json to_json(const CallList& list, double seconds)
{
    const FunctionInfo& f = list.function;
    nlohmann::json j;
    j["function"] = f.name;
    j["object"] = list.object;
    j["entry"] = f.entry;
    j["body"] = f.body;
    j["signature"] = f.signature();
    j["debug_info"] = f.has_debug_info;
    j["file"] = f.file;
    j["line"] = f.line;
    nlohmann::json calls = nlohmann::json::array();
    for (const CallRecord& c : list.calls) {
        nlohmann::json args = nlohmann::json::array();
        for (size_t i = 0; i < c.args.size(); i++) {
            if (f.has_debug_info)
                args.push_back({{"name", f.params[i].name}, {"type", f.params[i].type.name}, {"value", c.args[i]}});
            else
                args.push_back({{"register", c.args[i].substr(0, c.args[i].find('='))},
                                {"value", c.args[i].substr(c.args[i].find('=') + 1)}});
        }
        nlohmann::json call = {{"position", c.position},
                               {"entry_position", c.entry_position},
                               {"thread", c.thread},
                               {"return_address", c.return_address},
                               {"caller", place_json(c.caller)},
                               {"args", args},
                               {"returned", c.returned}};
        if (c.returned) {
            call["value"] = c.value;
            call["returned_at"] = c.returned_at;
        }
        calls.push_back(call);
    }
    j["calls"] = calls;
    j["complete"] = list.complete;
    j["most"] = list.most;
    j["notes"] = list.notes;
    j["seconds"] = seconds;
    return j;
}

void print_human(const CallList& list, double seconds)
{
    const FunctionInfo& f = list.function;
    std::string where = !f.file.empty() ? fmt::format(" ({}:{})", f.file, f.line) : "";
    fmt::print("{}{}, entry {:#x}{}{}\n", f.signature(), where, f.entry,
               list.object.empty() ? "" : " in " + list.object,
               f.has_debug_info ? "" : ": no debug information, arguments are the six argument registers");
    std::set<int64_t> threads;
    for (const CallRecord& c : list.calls)
        threads.insert(c.thread);
    size_t width = 0;
    for (const CallRecord& c : list.calls)
        width = std::max(width, c.position.size());
    for (const CallRecord& c : list.calls) {
        std::string args;
        for (size_t i = 0; i < c.args.size(); i++)
            args += (i ? ", " : "") + (f.has_debug_info ? f.params[i].name + "=" : "") + c.args[i];
        std::string result = !c.returned ? "  (did not return)" : c.value.empty() ? "" : " = " + c.value;
        std::string thread = threads.size() > 1 ? fmt::format("thread {}  ", c.thread) : "";
        fmt::print("  {:<{}}  {}from {}: {}({}){}\n", c.position, width, thread, c.caller.describe(), f.name, args,
                   result);
    }
    fmt::print("{} call{}", list.calls.size(), list.calls.size() == 1 ? "" : "s");
    if (threads.size() == 1)
        fmt::print(", thread {}", *threads.begin());
    fmt::print(", {:.2f} s\n", seconds);
    if (!list.complete)
        fmt::print("note: the list stops at {} calls (--most); later calls are not shown\n", list.most);
    for (const auto& n : list.notes)
        fmt::print("note: {}\n", n);
    if (!list.calls.empty())
        fmt::print("(goto POSITION in rewind replay: the call, past its prologue)\n");
}

} // namespace

void add_calls(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("calls", "List every call of a function, with its arguments and return value");
    auto a = std::make_shared<QueryArgs>();
    a->add_options(cmd, "FUNCTION");
    cmd->footer("Two replays of the recording that stop only at the function's first instruction and where its\n"
                "calls return. Arguments are read as the x86-64 ABI passes them (integers, pointers, floats in\n"
                "registers; `?` where a parameter is passed otherwise). Example:\n"
                "  rewind calls latest parse_line\n  rewind calls --exec sort latest memcmp --json");
    cmd->callback([a, &outcome] {
        QueryReplay replay(*a);
        FunctionInfo function;
        CallList list;
        replay.run([&](GdbMi& gdb) { function = function_info(gdb, replay.what()); },
                   [&](GdbMi& gdb) { list = list_calls(gdb, function, a->most); });
        if (a->json)
            fmt::print("{}\n", dump_for_display(to_json(list, replay.seconds()), 2));
        else
            print_human(list, replay.seconds());
        outcome.exit_code = 0;
    });
}

} // namespace rw::cli
