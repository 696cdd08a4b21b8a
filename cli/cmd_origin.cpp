// rewind origin [TRACE] LVALUE [--at POSITION] [--depth N] [--json]: where
// the value of LVALUE came from, hop by hop.
#include <fmt/core.h>
#include <sys/syscall.h>

#include <cstring>
#include <fstream>

#include "commands.h"
#include "event_format.h"
#include "json_bytes.h"
#include "memory_writes.h"
#include "origin_svg.h"
#include "query_replay.h"
#include "usage_error.h"
#include "value_origin.h"

namespace rw::cli {
namespace {

// The byte `byte` of a read from the pipe `pipe` made: the write into the
// pipe that put it there, in whichever process, and how to follow it on.
std::string from_pipe(const Trace& trace, const SyscallEvent& pipe, const SyscallEvent& read, uint64_t index,
                      uint64_t byte, uint64_t size)
{
    int32_t ends[2] = {-1, -1};
    for (const auto& m : pipe.memory)
        if (m.dir == Direction::Out && m.bytes.size() >= sizeof ends)
            std::memcpy(ends, m.bytes.data(), sizeof ends);
    std::string said = fmt::format(": byte {} of the read, from a pipe ({})", byte, format_syscall_call(pipe));
    if (ends[0] < 0 || read.args[0] != static_cast<uint64_t>(ends[0]))
        return said;
    // A pipe's bytes come out in the order they went in: the reads before
    // this one took the first ones.
    uint64_t offset = byte, written = 0;
    EventStreamReader events = trace.events();
    Event e;
    std::vector<std::pair<uint64_t, SyscallEvent>> writes;
    for (uint64_t i = 0; i < index && events.next(e); i++)
        if (const auto* s = std::get_if<SyscallEvent>(&e)) {
            if (s->nr == SYS_read && s->args[0] == read.args[0] && s->tgid == read.tgid && s->ret > 0 &&
                s->seq > pipe.seq)
                offset += static_cast<uint64_t>(s->ret);
            if (s->nr == SYS_write && s->args[0] == static_cast<uint64_t>(ends[1]) && s->ret > 0 && s->seq > pipe.seq)
                writes.emplace_back(i, *s);
        }
    for (const auto& [i, w] : writes) {
        if (offset < written + static_cast<uint64_t>(w.ret)) {
            uint64_t at = w.args[1] + (offset - written);
            return said + fmt::format(", written by process {} at event {}: {}, its byte {}; the writer's side: "
                                      "rewind origin --pid {} {} '*(unsigned char (*)[{}]){:#x}' --at {}",
                                      w.tgid, i, format_syscall_call(w), offset - written, w.tgid, trace.name(), size,
                                      at, i + 1);
        }
        written += static_cast<uint64_t>(w.ret);
    }
    return said;
}

// What event `index` wrote at `addr`: the syscall, and for a read from a
// file the byte of the file (the reads of that descriptor since its open
// add up to the offset).
std::string describe_origin_event(const Trace& trace, uint64_t index, uint64_t addr, uint64_t size)
{
    EventStreamReader events = trace.events();
    Event e;
    std::vector<SyscallEvent> before; // this thread's calls up to the event
    std::optional<SyscallEvent> call;
    for (uint64_t i = 0; i <= index && events.next(e); i++)
        if (const auto* s = std::get_if<SyscallEvent>(&e)) {
            if (i == index)
                call = *s;
            else
                before.push_back(*s);
        }
    if (!call)
        return fmt::format("event {} (not a syscall)", index);
    std::string what = fmt::format("event {}: {}", index, format_syscall_call(*call));
    if (call->nr == SYS_getrandom)
        return what + ": random bytes";
    if (call->nr != SYS_read && call->nr != SYS_pread64)
        return what;
    uint64_t fd = call->args[0], byte = addr - call->args[1];
    uint64_t offset = call->nr == SYS_pread64 ? call->args[3] + byte : byte;
    for (auto it = before.rbegin(); it != before.rend(); ++it) {
        const SyscallEvent& s = *it;
        if (s.tgid != call->tgid)
            continue;
        if ((s.nr == SYS_openat || s.nr == SYS_open) && s.ret == static_cast<int64_t>(fd))
            return what +
                   fmt::format(": byte {} of the read, byte {} of the file {}", byte, offset, format_syscall_call(s));
        if ((s.nr == SYS_pipe2 || s.nr == SYS_pipe) && s.ret == 0)
            return what + from_pipe(trace, s, *call, index, byte, size);
        if (s.nr == SYS_read && s.args[0] == fd && s.ret > 0 && call->nr == SYS_read)
            offset += static_cast<uint64_t>(s.ret);
        if (s.nr == SYS_lseek && s.args[0] == fd)
            return what + fmt::format(": byte {} of the read, byte {} of the file after a seek", byte,
                                      static_cast<uint64_t>(s.ret) + (offset - byte) + byte);
    }
    return what + fmt::format(": byte {} of the read (a descriptor the program did not open while recorded)", byte);
}

nlohmann::json to_json(const std::string& expr, const OriginChain& chain, double seconds)
{
    nlohmann::json hops = nlohmann::json::array();
    for (const OriginHop& h : chain.hops)
        hops.push_back({{"kind", h.kind},
                        {"position", h.position},
                        {"pc", h.pc},
                        {"function", h.place.function},
                        {"file", h.place.file},
                        {"line", h.place.line},
                        {"object", h.place.object},
                        {"instruction", h.instruction},
                        {"what", h.what},
                        {"tracked", h.tracked},
                        {"thread", h.thread}});
    return {
        {"expression", expr}, {"hops", hops}, {"complete", chain.complete}, {"ends", chain.ends}, {"seconds", seconds}};
}

void print_human(const std::string& expr, const OriginChain& chain, double seconds)
{
    fmt::print("{}: {} hop{}, the latest first\n", expr, chain.hops.size(), chain.hops.size() == 1 ? "" : "s");
    for (size_t k = 0; k < chain.hops.size(); k++) {
        const OriginHop& h = chain.hops[k];
        fmt::print("{:>3}. {:<9} {}\n", k + 1, h.kind, h.what);
        if (!h.instruction.empty())
            fmt::print("     at {}  {:#x} in {}: {}\n", h.position, h.pc, h.place.describe(), h.instruction);
        else if (!h.position.empty())
            fmt::print("     at {}\n", h.position);
        if (!h.tracked.empty() && k + 1 < chain.hops.size())
            fmt::print("     following {}\n", h.tracked);
    }
    fmt::print("{}: {}, {:.2f} s\n", chain.complete ? "origin" : "stopped", chain.ends, seconds);
}

} // namespace

void add_origin(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("origin", "Follow a value back to where it came from, hop by hop");
    auto a = std::make_shared<QueryArgs>();
    a->add_options(cmd, "LVALUE", false);
    auto at = std::make_shared<std::string>("end");
    auto depth = std::make_shared<size_t>(16);
    auto svg = std::make_shared<std::string>();
    cmd->add_option("--at", *at, "Where LVALUE has the value to explain: end (default), or a position");
    cmd->add_option("--depth", *depth, "Follow at most this many hops (default 16)")->check(CLI::Range(1, 200));
    cmd->add_option("--svg", *svg, "Also draw the chain in FILE: a timeline of the recording, a lane per thread");
    cmd->footer("From the last write to the bytes of LVALUE: a store to the register it stored, back to the\n"
                "instruction that set the register (a load, a move, arithmetic, a return value), a load to the\n"
                "last write to the loaded bytes, a libc copy (memcpy, strcpy …) to its source bytes, until a\n"
                "syscall's result (the file and byte a read got), a constant in the code or the program's\n"
                "initial data. Each hop's position goes to `goto` in rewind replay. Example:\n"
                "  rewind origin latest 'result'\n  rewind origin latest 'cfg.port' --at 50%");
    cmd->callback([a, at, depth, svg, &outcome] {
        QueryReplay replay(*a);
        LvalueInfo lvalue;
        OriginChain chain;
        replay.run(
            [&](GdbMi& gdb) {
                // A local means what it means where the value is asked about.
                if (*at != "end") {
                    tool_reply(gdb, "rw-goto " + *at);
                    gdb.console("sharedlibrary");
                    gdb.console("maintenance flush register-cache");
                }
                lvalue = lvalue_info(gdb, replay.what());
            },
            [&](GdbMi& gdb) {
                OriginOptions options;
                options.at = *at;
                options.depth = *depth;
                options.describe_event = [&](uint64_t event, uint64_t addr) {
                    return describe_origin_event(replay.trace(), event, addr, std::min<uint64_t>(lvalue.type.size, 8));
                };
                chain = trace_origin(gdb, lvalue.address, std::min<uint64_t>(lvalue.type.size, 8), options);
            });
        if (!svg->empty()) {
            const auto& end = replay.trace().end();
            std::ofstream out(*svg);
            out << origin_svg(replay.what(), chain, end ? end->events : 0);
            if (!out.flush())
                throw UsageError("cannot write " + *svg);
        }
        if (a->json)
            fmt::print("{}\n", dump_for_display(to_json(replay.what(), chain, replay.seconds()), 2));
        else
            print_human(replay.what(), chain, replay.seconds());
        outcome.exit_code = 0;
    });
}

} // namespace rw::cli
