#include "text.h"
#include "json_bytes.h"
#include "gdb_server.h"
#include "gdb_tls.h"

#include <elf.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <csignal>
#include <cstring>

#include "gdb_monitor.h"
#include "gdb_reverse_watch.h"
#include "nlohmann/json.hpp"
#include "gdb_registers.h"
#include "packet_fields.h"

namespace rw::replay {
namespace {

std::string hex_u64_le(uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (int i = 0; i < 8; i++) {
        uint8_t b = static_cast<uint8_t>(v >> (8 * i));
        s.push_back(digits[b >> 4]);
        s.push_back(digits[b & 15]);
    }
    return s;
}

std::string to_hex(std::string_view data)
{
    static const char digits[] = "0123456789abcdef";
    std::string s;
    for (unsigned char b : data) {
        s.push_back(digits[b >> 4]);
        s.push_back(digits[b & 15]);
    }
    return s;
}

std::string from_hex(std::string_view h)
{
    return packet_hex_bytes(h, "a hex-encoded field");
}

uint64_t parse_hex(const std::string& s)
{
    return packet_hex_number(s, "a number");
}

// A packet's name for a message: its first letters, printable.
std::string shown_name(const std::string& packet)
{
    std::string name = packet.substr(0, std::min(packet.find_first_of(":,;"), size_t(24)));
    for (char& c : name)
        if (!std::isprint(static_cast<unsigned char>(c)))
            c = '?';
    return "'" + name + "'";
}

// The name a packet is dispatched on.
std::string packet_name(const std::string& p)
{
    if (p.empty())
        return "";
    if (p[0] == 'v' || p[0] == 'q' || p[0] == 'Q') {
        size_t end = p.find_first_of(":;,");
        return p.substr(0, end);
    }
    if (p[0] == 'b' && p.size() >= 2)
        return p.substr(0, 2);
    return p.substr(0, 1);
}

// A chunk of a qXfer object: 'm' if more follows, 'l' for the last.
std::string xfer_chunk(const std::string& data, uint64_t offset, uint64_t length)
{
    if (offset >= data.size())
        return "l";
    std::string part = data.substr(offset, length);
    return (offset + part.size() < data.size() ? "m" : "l") + GdbConnection::escape(part);
}

} // namespace

// gdb's own signal numbers differ from Linux's above 6.
int GdbServer::to_gdb_signal(int host)
{
    static const std::pair<int, int> table[] = {
        {SIGHUP, 1},     {SIGINT, 2},   {SIGQUIT, 3},   {SIGILL, 4},   {SIGTRAP, 5},  {SIGABRT, 6},
        {SIGBUS, 10},    {SIGFPE, 8},   {SIGKILL, 9},   {SIGUSR1, 30}, {SIGSEGV, 11}, {SIGUSR2, 31},
        {SIGPIPE, 13},   {SIGALRM, 14}, {SIGTERM, 15},  {SIGCHLD, 20}, {SIGCONT, 19}, {SIGSTOP, 17},
        {SIGTSTP, 18},   {SIGTTIN, 21}, {SIGTTOU, 22},  {SIGURG, 16},  {SIGXCPU, 24}, {SIGXFSZ, 25},
        {SIGVTALRM, 26}, {SIGPROF, 27}, {SIGWINCH, 28}, {SIGIO, 23},   {SIGPWR, 32},  {SIGSYS, 12},
    };
    for (const auto& [h, g] : table)
        if (h == host)
            return g;
    if (host >= SIGRTMIN && host <= SIGRTMAX)
        return host == 32 ? 77 : 45 + (host - 33); // GDB_SIGNAL_REALTIME_32, _33…
    return 143;                                    // GDB_SIGNAL_UNKNOWN
}

int GdbServer::from_gdb_signal(int gdb)
{
    for (int host = 1; host < 65; host++)
        if (to_gdb_signal(host) == gdb)
            return host;
    return 0;
}

void GdbServer::add(std::string prefix, Handler handler)
{
    handlers_.emplace_back(std::move(prefix), std::move(handler));
}

GdbServer::GdbServer(GdbConnection& connection, DebugSession& session, HostFiles& files)
    : connection_(connection), session_(session), files_(files)
{
    using R = std::optional<ResumeRequest>;
    add("qSupported", [this](const std::string& packet) -> R {
        // Without working debug registers no position between two events
        // can be reached again: gdb is told there is no reverse execution
        // (and says so itself), rather than refused command by command.
        bool reverse = perfclock::breakpoints_work();
        if (!reverse && !told_no_reverse_) {
            std::fprintf(stderr, "rewind: reverse execution is unavailable: the CPU's debug registers do not work on "
                                 "this machine (`rewind doctor`: hw breakpoints)\n");
            told_no_reverse_ = true;
        }
        reply(std::string("PacketSize=10000;QStartNoAckMode+;qXfer:features:read+;qXfer:auxv:read+;"
                          "qXfer:exec-file:read+;qXfer:threads:read+;qXfer:siginfo:read+;QPassSignals+;") +
              (reverse ? "ReverseStep+;ReverseContinue+;" : "") +
              (packet.find("exec-events+") != std::string::npos ? "exec-events+;" : "") +
              "swbreak+;hwbreak+;vContSupported+");
        return {};
    });
    add("QStartNoAckMode", [this](const std::string&) -> R {
        reply("OK");
        connection_.set_no_ack();
        return {};
    });
    add("!", [this](const std::string&) -> R { return reply("OK"), R{}; });
    add("?", [this](const std::string&) -> R { return reply(killed_ ? "W00" : stop_reply(last_stop_)), R{}; });
    add("qAttached", [this](const std::string&) -> R { return reply("1"), R{}; });
    add("H", [this](const std::string& p) -> R {
        Tid t = thread_arg(p.substr(2));
        if (p[1] == 'g' && t > 0)
            general_tid_ = t;
        if (p[1] == 'c')
            continue_tid_ = t;
        reply(t <= 0 || session_.has_thread(t) ? "OK" : "E01");
        return {};
    });
    add("T", [this](const std::string& p) -> R {
        return reply(session_.has_thread(thread_arg(p.substr(1))) ? "OK" : "E01"), R{};
    });
    add("qC", [this](const std::string&) -> R {
        char buf[32];
        std::snprintf(buf, sizeof(buf), "QC%x", general_thread());
        return reply(buf), R{};
    });
    add("qfThreadInfo", [this](const std::string&) -> R {
        std::string out = "m";
        for (Tid t : session_.threads()) {
            char buf[24];
            std::snprintf(buf, sizeof(buf), "%s%x", out.size() > 1 ? "," : "", t);
            out += buf;
        }
        return reply(out.size() > 1 ? out : "l"), R{};
    });
    add("qsThreadInfo", [this](const std::string&) -> R { return reply("l"), R{}; });
    add("g", [this](const std::string&) -> R {
        pid_t pid = session_.process_of(general_thread());
        reply(pid ? encode_registers(read_register_file(pid)) : "E01");
        return {};
    });
    add("G", [this](const std::string& p) -> R {
        Tid tid = general_thread();
        RegisterFile regs = read_register_file(session_.process_of(tid));
        if (!decode_registers(regs, p.substr(1)))
            return reply("E01"), R{};
        session_.write_registers(tid, regs);
        return reply("OK"), R{};
    });
    add("p", [this](const std::string& p) -> R {
        pid_t pid = session_.process_of(general_thread());
        auto value =
            pid ? encode_register(read_register_file(pid), static_cast<int>(parse_hex(p.substr(1)))) : std::nullopt;
        return reply(value ? *value : "E01"), R{};
    });
    add("P", [this](const std::string& p) -> R {
        auto eq = p.find('=');
        Tid tid = general_thread();
        RegisterFile regs = read_register_file(session_.process_of(tid));
        if (eq == std::string::npos ||
            !decode_register(regs, static_cast<int>(parse_hex(p.substr(1, eq - 1))), p.substr(eq + 1)))
            return reply("E01"), R{};
        session_.write_registers(tid, regs);
        return reply("OK"), R{};
    });
    add("m", [this](const std::string& p) -> R { return on_read_memory(p), R{}; });
    add("M", [this](const std::string& p) -> R { return on_write_memory(p, false), R{}; });
    add("X", [this](const std::string& p) -> R { return on_write_memory(p, true), R{}; });
    add("Z", [this](const std::string& p) -> R { return on_breakpoint(p, true), R{}; });
    add("z", [this](const std::string& p) -> R { return on_breakpoint(p, false), R{}; });
    add("vCont?", [this](const std::string&) -> R { return reply("vCont;c;C;s;S"), R{}; });
    add("vCont", [this](const std::string& p) -> R { return on_vcont(p); });
    add("c", [this](const std::string&) -> R { return resume_packet(ResumeRequest::Kind::Continue); });
    add("C", [this](const std::string& p) -> R {
        return resume_packet(ResumeRequest::Kind::Continue,
                             from_gdb_signal(static_cast<int>(parse_hex(p.substr(1, 2)))));
    });
    add("s", [this](const std::string&) -> R { return resume_packet(ResumeRequest::Kind::Step); });
    add("S", [this](const std::string& p) -> R {
        return resume_packet(ResumeRequest::Kind::Step, from_gdb_signal(static_cast<int>(parse_hex(p.substr(1, 2)))));
    });
    add("bc", [this](const std::string&) -> R { return resume_packet(ResumeRequest::Kind::ReverseContinue); });
    add("bs", [this](const std::string&) -> R { return resume_packet(ResumeRequest::Kind::ReverseStep); });
    add("vRun", [this](const std::string& p) -> R { return on_vrun(p); });
    add("vKill", [this](const std::string&) -> R {
        killed_ = true;
        return reply("OK"), R{};
    });
    add("k", [](const std::string&) -> R { return ResumeRequest{ResumeRequest::Kind::Kill, 0}; });
    add("D", [this](const std::string&) -> R {
        reply("OK");
        return ResumeRequest{ResumeRequest::Kind::Kill, 0};
    });
    add("qXfer", [this](const std::string& p) -> R { return on_qxfer(p), R{}; });
    add("vFile", [this](const std::string& p) -> R { return reply(files_.handle(p)), R{}; });
    add("qRcmd", [this](const std::string& p) -> R { return on_monitor(p); });
    add("QPassSignals", [this](const std::string& p) -> R {
        std::set<int> passed;
        for (const auto& s : split(p.substr(p.find(':') + 1), ';'))
            if (!s.empty())
                passed.insert(from_gdb_signal(static_cast<int>(parse_hex(s))));
        session_.set_passed_signals(passed);
        return reply("OK"), R{};
    });
    add("qSymbol", [this](const std::string&) -> R { return reply("OK"), R{}; });
    add("qGetTLSAddr", [this](const std::string& p) -> R { // THREAD,OFFSET,LM
        auto args = split(p.substr(p.find(':') + 1), ',');
        if (args.size() != 3)
            return reply("E01"), R{};
        Tid tid = thread_arg(args[0]);
        std::string answer = thread_local_address(session_, files_, tid > 0 ? tid : general_thread(),
                                                  parse_hex(args[1]), parse_hex(args[2]));
        if (answer.starts_with("E.")) // gdb shows no reason
            std::fprintf(stderr, "rewind: thread-local storage: %s\n", answer.c_str() + 2);
        return reply(answer), R{};
    });
    add("qThreadExtraInfo", [this](const std::string&) -> R { return reply(to_hex("")), R{}; });
    for (const char* ok : {"QNonStop", "QProgramSignals", "QDisableRandomization", "QEnvironmentReset",
                           "QEnvironmentHexEncoded", "QEnvironmentUnset", "QSetWorkingDir", "QStartupWithShell"})
        add(ok, [this](const std::string&) -> R { return reply("OK"), R{}; });
}

GdbServer::~GdbServer() = default;

std::optional<ResumeRequest> GdbServer::dispatch(const std::string& packet)
{
    std::string name = packet_name(packet);
    for (const auto& [prefix, handler] : handlers_)
        if (prefix == name)
            return handler(packet);
    reply(""); // not supported
    return std::nullopt;
}

std::string GdbServer::machine_reply(std::string json) const
{
    constexpr size_t kLongReply = 64 * 1024;
    if (reply_dir_.empty() || json.size() <= kLongReply)
        return json;
    std::string name = reply_dir_ + "/reply-XXXXXX";
    int fd = ::mkstemp(name.data());
    if (fd < 0)
        return json;
    bool written = ::write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size());
    ::close(fd);
    if (!written) {
        ::unlink(name.c_str());
        return json;
    }
    return nlohmann::json{{"reply_file", name}}.dump();
}

ResumeRequest GdbServer::on_stop(const StopReport& report)
{
    last_stop_ = report;
    if (pending_monitor_travel_) {
        // A `monitor goto`/`restart` moved the replay: its reply is the answer.
        pending_monitor_travel_.reset();
        const std::string& error = session_.travel_error();
        if (reverse_watch_) {
            std::string text = reverse_watch_->finish();
            reverse_watch_.reset();
            reply("O" + to_hex(text + (error.empty() ? "" : "rewind: " + error + "\n")));
        } else if (pending_monitor_machine_) {
            std::string json = !error.empty() ? dump_for_display(nlohmann::json{{"error", error}})
                               : !session_.probe_result().empty()
                                   ? session_.probe_result()
                                   : nlohmann::json{{"position", session_.position().serialize()}}.dump();
            reply("O" + to_hex(machine_reply(std::move(json)) + "\n"));
        } else {
            reply("O" +
                  to_hex(error.empty() ? "Now at " + session_.describe_position() + ".\n" : "rewind: " + error + "\n"));
        }
        reply("OK");
    } else if (reply_pending_) {
        // A refused move stops where it was: say why. (Console output is
        // part of a reply to a resumption; the answer to vRun is the stop
        // alone, or gdb reads every later reply one packet late.)
        if (!session_.travel_error().empty()) {
            if (pending_is_run_)
                std::fprintf(stderr, "rewind: %s\n", session_.travel_error().c_str());
            else
                reply("O" + to_hex("rewind: " + session_.travel_error() + "\n"));
        }
        session_.clear_travel_error();
        reply(stop_reply(report));
        reply_pending_ = false;
        pending_is_run_ = false;
    }
    for (;;) {
        auto packet = connection_.read_packet();
        if (!packet) {
            if (connection_.lost_mid_reply())
                std::fprintf(stderr, "rewind: gdb went away while rewind was replying to it (the connection "
                                     "broke); the session ends\n");
            else if (!killed_)
                std::fprintf(stderr, "rewind: gdb went away without ending the session (the connection closed); "
                                     "the session ends\n");
            return ResumeRequest{ResumeRequest::Kind::Kill, 0};
        }
        try {
            if (auto request = dispatch(*packet))
                return *request;
        } catch (const MalformedPacket& e) {
            reply("E01");
            std::fprintf(stderr, "rewind: a malformed %s packet from gdb (%s): answered with an error\n",
                         shown_name(*packet).c_str(), e.what());
        } catch (const std::logic_error&) {
            // (std::invalid_argument, std::out_of_range: a field no parser above expected)
            reply("E01");
            std::fprintf(stderr,
                         "rewind: a %s packet from gdb with a field rewind cannot parse: answered with an error\n",
                         shown_name(*packet).c_str());
        } catch (const ReplayError& e) {
            reply("E01");
            std::fprintf(stderr, "rewind: %s\n", e.report().c_str());
        } catch (const std::exception& e) {
            reply("E01");
            std::fprintf(stderr, "rewind: %s\n", e.what());
        }
    }
}

std::optional<ResumeRequest> GdbServer::resume_packet(ResumeRequest::Kind kind, int signal)
{
    reply_pending_ = true;
    ResumeRequest r{kind, 0};
    r.signal = signal;
    // The thread that steps: the one `Hc` named, else the one gdb looks at.
    if (kind == ResumeRequest::Kind::Step || kind == ResumeRequest::Kind::ReverseStep)
        r.thread = continue_tid_ > 0 ? continue_tid_ : general_thread();
    return r;
}

std::optional<ResumeRequest> GdbServer::on_vcont(const std::string& p)
{
    // vCont;action[:thread];… : a step names the thread that steps. An
    // action without a thread lets every other thread run too; without one,
    // only the named threads may (gdb's scheduler-locking). A signal given
    // with C/S is delivered only where the debugger's choice counts (code it
    // runs itself); the replay delivers exactly the recorded signals.
    bool step = false, others_run = false;
    int signal = 0;
    Tid named = 0;
    for (const auto& action : split(p.substr(6), ';')) {
        if (action.empty())
            continue;
        size_t colon = action.find(':');
        Tid thread = colon == std::string::npos ? -1 : thread_arg(action.substr(colon + 1));
        if (thread <= 0)
            others_run = true;
        if (action[0] == 's' || action[0] == 'S') {
            step = true;
            if (thread > 0)
                named = thread;
        } else if (thread > 0 && !named) {
            named = thread;
        }
        if ((action[0] == 'C' || action[0] == 'S') && action.size() >= 3)
            signal = from_gdb_signal(static_cast<int>(parse_hex(action.substr(1, 2))));
    }
    auto r = resume_packet(step ? ResumeRequest::Kind::Step : ResumeRequest::Kind::Continue, signal);
    if (named)
        r->thread = named;
    r->only_thread = named && !others_run;
    return r;
}

std::optional<ResumeRequest> GdbServer::on_vrun(const std::string& p)
{
    // `run` from rewind's init script: `run goto 50%`, `run restart 2`, or
    // plain `run` (the beginning).
    auto fields = split(p, ';');
    std::vector<std::string> args;
    for (size_t i = 2; i < fields.size(); i++)
        args.push_back(from_hex(fields[i]));
    ResumeRequest r{ResumeRequest::Kind::GotoCheckpoint, 0};
    if (!args.empty() && args[0] == "goto" && args.size() > 1) {
        std::string error;
        auto g = parse_goto(args[1], error);
        if (!g) {
            reply("E01");
            return std::nullopt;
        }
        r = *g;
    } else if (!args.empty() && args[0] == "restart" && args.size() > 1) {
        try {
            r.value = std::stoull(args[1]);
        } catch (const std::exception&) {
            reply("E01");
            return std::nullopt;
        }
    }
    if (auto why = travel_error(session_, r)) {
        std::fprintf(stderr, "rewind: %s\n", why->c_str());
        reply("E01");
        return std::nullopt;
    }
    killed_ = false;
    reply_pending_ = true;
    pending_is_run_ = true;
    return r;
}

std::optional<ResumeRequest> GdbServer::on_monitor(const std::string& p)
{
    std::string command = from_hex(p.substr(6));
    if (command.rfind("reverse-watch ", 0) == 0) {
        std::string expr = command.substr(14);
        if (expr.find_first_not_of(" \t") == std::string::npos) {
            reply("O" + to_hex("reverse-watch needs an expression, such as `reverse-watch has_cycle(g)`\n"));
            reply("OK");
            return std::nullopt;
        }
        reverse_watch_ = std::make_unique<ReverseWatch>(session_, expr, session_.position().serialize());
        ResumeRequest r{ResumeRequest::Kind::SwitchFrontend, 0};
        r.frontend = &reverse_watch_->server();
        pending_monitor_travel_ = r;
        pending_monitor_machine_ = false;
        return r;
    }
    if (command == "rw-capture-watch start" || command == "rw-capture-watch end") {
        // Which memory gdb watches for an expression (see BreakpointCapture).
        nlohmann::json j;
        if (command.ends_with("start")) {
            capture_.start();
            j["capturing"] = true;
        } else {
            j["ranges"] = nlohmann::json::array();
            for (const auto& p : capture_.finish())
                j["ranges"].push_back({{"addr", p.addr}, {"len", p.len}, {"access", p.type == 2 ? 1 : 2}});
        }
        reply("O" + to_hex(j.dump() + "\n"));
        reply("OK");
        return std::nullopt;
    }
    MonitorResult m = run_monitor_command(session_, command);
    if (m.travel) {
        pending_monitor_travel_ = m.travel;
        pending_monitor_machine_ = m.machine;
        return m.travel;
    }
    if (!m.output.empty())
        reply("O" + to_hex(m.output));
    reply("OK");
    return std::nullopt;
}

void GdbServer::on_qxfer(const std::string& p)
{
    // qXfer:object:read:annex:offset,length
    auto fields = split(p, ':');
    if (fields.size() < 5 || fields[2] != "read")
        return reply("");
    auto range = split(fields[4], ',');
    uint64_t offset = parse_hex(range[0]), length = range.size() > 1 ? parse_hex(range[1]) : 0;
    const std::string& object = fields[1];
    std::string data;
    if (object == "features" && fields[3] == "target.xml") {
        data = target_description_xml();
    } else if (object == "auxv") {
        for (uint64_t v : session_.program().auxv)
            data.append(reinterpret_cast<const char*>(&v), 8);
        data.append(16, '\0'); // AT_NULL
    } else if (object == "siginfo") {
        if (!last_stop_.siginfo)
            return reply("E01"); // not stopped by a recorded signal
        data.assign(reinterpret_cast<const char*>(last_stop_.siginfo->data()), last_stop_.siginfo->size());
    } else if (object == "exec-file") {
        data = session_.program().executable;
    } else if (object == "threads") {
        data = "<?xml version=\"1.0\"?>\n<threads>\n";
        for (Tid t : session_.threads()) {
            char buf[64];
            std::snprintf(buf, sizeof(buf), "<thread id=\"%x\" core=\"0\"/>\n", t);
            data += buf;
        }
        data += "</threads>\n";
    } else {
        return reply("E00");
    }
    reply(xfer_chunk(data, offset, length));
}

void GdbServer::on_breakpoint(const std::string& p, bool insert)
{
    // Z<type>,<addr>,<kind>
    auto f = split(p.substr(1), ',');
    if (f.size() < 3)
        return reply("E01");
    int type = static_cast<int>(parse_hex(f[0]));
    uint64_t addr = parse_hex(f[1]);
    uint32_t len = static_cast<uint32_t>(parse_hex(f[2]));
    BreakpointSet& bps = session_.breakpoints();
    if (type == 3)
        return reply(""); // x86 has no read-only watchpoints
    if (type != 0 && !perfclock::breakpoints_work())
        return reply(""); // no working debug registers: gdb uses its software watchpoints
    if (capture_.take({type, addr, len}, insert))
        return reply("OK");
    if (type == 0) {
        insert ? bps.add_software(addr) : bps.remove_software(addr);
        return reply("OK");
    }
    HardwareBreakpoint hw{type == 1   ? perfclock::BreakpointKind::Execute
                          : type == 2 ? perfclock::BreakpointKind::Write
                                      : perfclock::BreakpointKind::ReadWrite,
                          addr, type == 1 ? 8u : len};
    if (type != 1 && len != 1 && len != 2 && len != 4 && len != 8)
        return reply("E01");
    if (!insert) {
        bps.remove_hardware(hw);
        return reply("OK");
    }
    bps.add_hardware(hw);
    // Probe that the CPU has a debug register left for it.
    try {
        perfclock::BreakpointCounter probe(session_.process_of(general_thread()), hw.kind, hw.addr, hw.len, 0, 0);
    } catch (const std::exception&) {
        bps.remove_hardware(hw);
        return reply("E01");
    }
    reply("OK");
}

void GdbServer::on_read_memory(const std::string& p)
{
    auto f = split(p.substr(1), ',');
    if (f.size() < 2)
        return reply("E01");
    uint64_t addr = parse_hex(f[0]);
    size_t len = std::min<size_t>(parse_hex(f[1]), 65536);
    std::string buf(len, '\0');
    size_t n = session_.read_memory(addr, {reinterpret_cast<uint8_t*>(buf.data()), len});
    if (n == 0 && len > 0)
        return reply("E14");
    buf.resize(n);
    reply(to_hex(buf));
}

void GdbServer::on_write_memory(const std::string& p, bool binary)
{
    auto colon = p.find(':');
    auto f = split(p.substr(1, colon - 1), ',');
    if (colon == std::string::npos || f.size() < 2)
        return reply("E01");
    uint64_t addr = parse_hex(f[0]);
    size_t len = parse_hex(f[1]);
    std::string data = binary ? p.substr(colon + 1) : from_hex(p.substr(colon + 1));
    if (data.size() != len)
        return reply("E01");
    if (len == 0)
        return reply("OK");
    bool ok = session_.write_memory(addr, {reinterpret_cast<const uint8_t*>(data.data()), data.size()});
    reply(ok ? "OK" : "E14");
}

Tid GdbServer::thread_arg(const std::string& s)
{
    if (s.empty() || s == "-1")
        return -1;
    size_t dot = s.find('.');
    std::string t = dot == std::string::npos ? s : s.substr(dot + 1);
    return static_cast<Tid>(parse_hex(t));
}

Tid GdbServer::general_thread()
{
    if (general_tid_ > 0 && session_.has_thread(general_tid_))
        return general_tid_;
    return session_.current_thread();
}

std::string GdbServer::stop_reply(const StopReport& r)
{
    char buf[64];
    if (r.kind == StopReport::Kind::Exited) {
        if ((r.exit_status & 0x7f) == 0)
            std::snprintf(buf, sizeof(buf), "W%02x", (r.exit_status >> 8) & 0xff);
        else
            std::snprintf(buf, sizeof(buf), "X%02x", to_gdb_signal(r.exit_status & 0x7f));
        return buf;
    }
    int sig = r.kind == StopReport::Kind::Signal ? r.signal : SIGTRAP;
    std::snprintf(buf, sizeof(buf), "T%02x", to_gdb_signal(sig));
    std::string out = buf;
    if (r.kind == StopReport::Kind::Exec)
        out += "exec:" + to_hex(r.exec_path) + ";";
    std::snprintf(buf, sizeof(buf), "thread:%x;", r.tid);
    out += buf;
    if (pid_t pid = session_.process_of(r.tid)) {
        try {
            Registers regs = get_registers(pid);
            std::snprintf(buf, sizeof(buf), "%02x:", kGdbRbp);
            out += buf + hex_u64_le(regs[Registers::RBP]) + ";";
            std::snprintf(buf, sizeof(buf), "%02x:", kGdbRsp);
            out += buf + hex_u64_le(regs[Registers::RSP]) + ";";
            std::snprintf(buf, sizeof(buf), "%02x:", kGdbRip);
            out += buf + hex_u64_le(regs[Registers::RIP]) + ";";
        } catch (const std::exception&) {
        }
    }
    switch (r.kind) {
    case StopReport::Kind::SoftwareBreak:
        out += "swbreak:;";
        break;
    case StopReport::Kind::HardwareBreak:
        out += "hwbreak:;";
        break;
    case StopReport::Kind::Watch:
        std::snprintf(buf, sizeof(buf), "%s:%llx;", r.watch_access == 1 ? "watch" : "awatch",
                      static_cast<unsigned long long>(r.watch_addr));
        out += buf;
        break;
    case StopReport::Kind::ReplayBegin:
        out += "replaylog:begin;";
        break;
    case StopReport::Kind::ReplayEnd:
        out += "replaylog:end;";
        break;
    default:
        break;
    }
    return out;
}

} // namespace rw::replay
