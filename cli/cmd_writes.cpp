// rewind writes [TRACE] LVALUE|ADDRESS [--size N] [--json]: every write to
// some bytes in the recording, with the values before and after and what
// wrote them.
#include <fmt/core.h>

#include <regex>

#include "commands.h"
#include "event_format.h"
#include "json_bytes.h"
#include "memory_writes.h"
#include "query_replay.h"

namespace rw::cli {
namespace {

// "read(3, 0x…, 8) = 8", or the event as dump shows it.
std::string describe_event(const Trace& trace, uint64_t index)
{
    EventStreamReader events = trace.events();
    events.seek(index);
    Event e;
    if (!events.next(e))
        return "";
    if (const auto* s = std::get_if<SyscallEvent>(&e))
        return format_syscall_call(*s);
    std::string line = format_event(index, e, FormatOptions{0});
    return line.substr(0, line.find('\n'));
}

nlohmann::json to_json(const WriteList& list, const Trace& trace, double seconds)
{
    nlohmann::json j;
    j["expression"] = list.watched.expr;
    j["address"] = list.watched.address;
    j["size"] = list.watched.type.size;
    j["type"] = list.watched.type.name;
    j["initial"] = list.initial;
    nlohmann::json writes = nlohmann::json::array();
    for (const WriteRecord& w : list.writes) {
        nlohmann::json x = {{"position", w.position}, {"by", w.by}, {"old", w.old_value}, {"new", w.new_value}};
        if (w.by == "event") {
            x["event"] = w.event;
            x["what"] = describe_event(trace, w.event);
        } else {
            x["thread"] = w.thread;
            x["writers"] = w.writers;
            x["function"] = w.place.function;
            x["file"] = w.place.file;
            x["line"] = w.place.line;
            x["object"] = w.place.object;
        }
        writes.push_back(x);
    }
    j["writes"] = writes;
    j["complete"] = list.complete;
    j["most"] = list.most;
    j["seconds"] = seconds;
    return j;
}

void print_human(const WriteList& list, const Trace& trace, double seconds)
{
    const WatchedBytes& w = list.watched;
    fmt::print("{} ({}, {} bytes at {:#x}), {} at the start\n", w.expr, w.type.name, w.type.size, w.address,
               list.initial);
    std::set<int64_t> threads;
    size_t width = 0;
    for (const WriteRecord& r : list.writes) {
        if (r.by == "instruction")
            threads.insert(r.thread);
        width = std::max(width, r.position.size());
    }
    for (const WriteRecord& r : list.writes) {
        std::string by =
            r.by == "event" ? fmt::format("event {}: {}", r.event, describe_event(trace, r.event)) : r.place.describe();
        std::string thread = threads.size() > 1 && r.by == "instruction" ? fmt::format("thread {}  ", r.thread) : "";
        fmt::print("  {:<{}}  {}{}: {} -> {}\n", r.position, width, thread, by, r.old_value, r.new_value);
    }
    fmt::print("{} write{}", list.writes.size(), list.writes.size() == 1 ? "" : "s");
    if (threads.size() == 1)
        fmt::print(", thread {}", *threads.begin());
    fmt::print(", {:.2f} s\n", seconds);
    if (!list.complete)
        fmt::print("note: the list stops at {} writes (--most); later writes are not shown\n", list.most);
    if (!list.writes.empty())
        fmt::print("(a position is just after the write: goto POSITION in rewind replay)\n");
}

} // namespace

void add_writes(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("writes", "List every write to a variable or to some bytes, with the values");
    auto a = std::make_shared<QueryArgs>();
    a->add_options(cmd, "LVALUE|ADDRESS");
    auto size = std::make_shared<uint64_t>(8);
    cmd->add_option("--size", *size, "With an ADDRESS: how many bytes (default 8)")->check(CLI::Range(1, 32));
    cmd->footer("One replay of the recording with the bytes watched by the CPU's debug registers (up to 32 bytes\n"
                "in 4 aligned pieces); the writes of syscalls and signals are found at each event. LVALUE is\n"
                "resolved where the recording ends (a global, a static, a field of one, *POINTER). Example:\n"
                "  rewind writes latest 'config.verbose'\n  rewind writes latest 0x5555555592a0 --size 4");
    cmd->callback([a, size, &outcome] {
        QueryReplay replay(*a);
        WatchedBytes watched;
        WriteList list;
        auto resolve = [&](GdbMi& gdb) {
            watched.expr = replay.what();
            static const std::regex number("0[xX][0-9a-fA-F]+|[0-9]+");
            if (std::regex_match(watched.expr, number)) {
                watched.address = std::stoull(watched.expr, nullptr, 0);
                watched.type = TypeInfo{fmt::format("{} bytes", *size), *size <= 8 ? "int" : "other", *size, false, ""};
                if (*size == 8 || *size == 4 || *size == 2 || *size == 1)
                    watched.type.name = fmt::format("uint{}_t", *size * 8);
            } else {
                LvalueInfo l = lvalue_info(gdb, watched.expr);
                watched.address = l.address;
                watched.type = l.type;
            }
        };
        replay.run(resolve, [&](GdbMi& gdb) { list = list_writes(gdb, watched, a->most); });
        if (a->json)
            fmt::print("{}\n", dump_for_display(to_json(list, replay.trace(), replay.seconds()), 2));
        else
            print_human(list, replay.trace(), replay.seconds());
        outcome.exit_code = 0;
    });
}

} // namespace rw::cli
