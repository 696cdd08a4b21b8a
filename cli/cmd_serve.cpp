// rewind serve [TRACE] --stdio | --port N: the gdb remote-protocol server.
#include <arpa/inet.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <string>

#include "commands.h"
#include "task_clock.h"
#include "debug_session.h"
#include "event_format.h"
#include "gdb_connection.h"
#include "gdb_host_files.h"
#include "gdb_server.h"
#include "landmarks.h"
#include "loopback_peer.h"
#include "position_arg.h"
#include "process_choice.h"
#include "replay_limits.h"
#include "usage_error.h"
#include "trace.h"
#include "trace_dir.h"
#include "unique_fd.h"

namespace rw::cli {
namespace {

// Waits on the loopback interface only: a replay exposes the recorded
// program's memory, which must not be reachable from another machine.
UniqueFd accept_one_on_loopback(int port)
{
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!listener)
        throw std::system_error(errno, std::generic_category(), "socket");
    int one = 1;
    ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
        throw UsageError(fmt::format("cannot listen on 127.0.0.1:{}: {}", port, std::strerror(errno)));
    if (::listen(listener.get(), 1) != 0)
        throw std::system_error(errno, std::generic_category(), "listen");
    fmt::print(stderr, "rewind: waiting for gdb on 127.0.0.1:{} (in gdb: target extended-remote localhost:{})\n", port,
               port);
    for (;;) {
        UniqueFd conn(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (!conn) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            throw std::system_error(errno, std::generic_category(), "accept");
        }
        // Any local user can reach the port: only this user (or root) may
        // see the recording through it.
        std::optional<uid_t> peer = loopback_peer_uid(conn.get());
        if (!peer || (*peer != ::getuid() && *peer != 0)) {
            std::string who = peer ? std::to_string(*peer) : "unknown";
            if (struct passwd* pw = peer ? ::getpwuid(*peer) : nullptr)
                who += std::string(" (") + pw->pw_name + ")";
            fmt::print(stderr,
                       "rewind: refused a connection from uid {}: only the user who started rewind serve, or root, "
                       "may connect; still waiting\n",
                       who);
            continue;
        }
        ::setsockopt(conn.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return conn;
    }
}

// A tool driving gdb (rewind watch) reads why the server ended here:
// gdb relays the server's stderr only while the connection lasts.
// Why the replay failed, in FILE, and (a replay's failure) its status,
// 90 to 93, in FILE.status: rewind watch ends with it.
void leave_error(const std::string& error_file, const std::string& why, int status = 0)
{
    if (error_file.empty())
        return;
    if (FILE* f = std::fopen(error_file.c_str(), "w")) {
        std::fputs(why.c_str(), f);
        std::fclose(f);
    }
    if (status == 0)
        return;
    if (FILE* f = std::fopen((error_file + ".status").c_str(), "w")) {
        std::fprintf(f, "%d\n", status);
        std::fclose(f);
    }
}

struct ServeStart {
    bool landmarks = true;
    bool trust_landmarks = false;
    std::optional<PositionArg> from;
    std::string reply_dir;
};

// Where the debugger starts, as the session's first travel.
replay::ResumeRequest start_request(const PositionArg& from)
{
    using Kind = replay::ResumeRequest::Kind;
    if (from.percent)
        return replay::ResumeRequest(Kind::GotoPercent, *from.percent);
    if (from.position.path.empty())
        return replay::ResumeRequest(Kind::GotoEvent, from.position.event);
    replay::ResumeRequest r(Kind::GotoPosition);
    r.from = from.position;
    return r;
}

int serve(const Trace& trace, replay::ReplayOptions options, Tid pid, int in_fd, int out_fd,
          const std::string& error_file, const ServeStart& start)
{
    // Said before gdb shows anything: a value seen in this session may be
    // one the recording never had.
    if (std::string limit = parallel_replay_limit(trace.meta().thread_mode); !limit.empty())
        fmt::print(stderr, "rewind: note: {}\n", limit);
    try {
        replay::DebugSession session(trace, options);
        if (pid)
            session.debug_process(pid);
        // (An attached trace starts from its start image, a landmark of its own.)
        if (start.landmarks || trace.meta().attached)
            session.use_landmarks(std::make_unique<replay::LandmarkSet>(
                trace, [](const std::string& line) { fmt::print(stderr, "rewind: {}\n", line); }, start.trust_landmarks,
                start.landmarks));
        if (start.from)
            session.start_at(start_request(*start.from));
        replay::HostFiles files(trace);
        replay::GdbConnection connection(in_fd, out_fd);
        replay::GdbServer server(connection, session, files);
        server.set_reply_dir(start.reply_dir);
        session.run(server);
    } catch (const replay::ReplayError& e) {
        fmt::print(stderr, "rewind: {}\n", e.report());
        leave_error(error_file, e.report(), replay::exit_status_for(e.kind()));
        return replay::exit_status_for(e.kind());
    } catch (const std::exception& e) {
        leave_error(error_file, e.what());
        throw;
    }
    return 0;
}

} // namespace

void add_serve(CLI::App& app, Outcome& outcome)
{
    auto* cmd = app.add_subcommand("serve", "Serve a replay to gdb over the remote protocol");
    struct Args {
        std::string trace;
        bool stdio = false;
        int port = 0;
        int watchdog = 120;
        bool quiet = false;
        bool verbose = false;
        std::string error_file;
        std::string reply_dir;
        std::string from;
        bool no_landmarks = false;
        bool trust_landmarks = false;
        ProcessChoice process;
    };
    auto a = std::make_shared<Args>();
    cmd->add_option("trace", a->trace, "Trace directory or name (default: latest)");
    a->process.add_options(cmd);
    auto* stdio =
        cmd->add_flag("--stdio", a->stdio, "Speak the protocol on stdin/stdout (gdb: target extended-remote | …)");
    cmd->add_option("--port", a->port, "Listen on 127.0.0.1:PORT for one gdb connection")
        ->check(CLI::Range(1, 65535))
        ->excludes(stdio);
    cmd->add_flag("-q,--quiet", a->quiet, "Do not re-emit the program's output");
    cmd->add_flag("-v,--verbose", a->verbose, "Print each event on stderr as it is replayed");
    cmd->add_option("--watchdog", a->watchdog, "Seconds a thread may run without reaching its next event")
        ->check(CLI::Range(1, 86400));
    cmd->add_option("--error-file", a->error_file,
                    "Also write why the replay ended, if it failed, to FILE (and its status, 90-93, to FILE.status)");
    cmd->add_option("--reply-dir", a->reply_dir,
                    "Write the tool replies longer than 64 KiB (rw-query) to files in DIR, for the tool that "
                    "started this server to read (rewind calls, rewind writes)");
    cmd->add_option("--from", a->from,
                    "Start at this position (90%, an event index, or a position as `monitor when` prints it)");
    cmd->add_flag("--no-landmarks", a->no_landmarks, "Do not start from the trace's landmarks (rewind landmark)");
    add_trust_landmarks_flag(cmd, a->trust_landmarks);
    cmd->footer("The program's output goes to stderr with --stdio, to stdout with --port.\n"
                "Examples:\n  (gdb) target extended-remote | rewind serve --stdio latest\n"
                "  rewind serve --port 2345 latest     then in gdb: target extended-remote localhost:2345");
    cmd->callback([a, &outcome] {
        if (!a->stdio && a->port == 0)
            throw UsageError("give --stdio or --port PORT");
        // A gdb that goes away while a reply is being written must end the
        // session with a word, not kill the server silently (status 141).
        // The replayed program gets its recorded dispositions all the same
        // (the launcher sets every one).
        std::signal(SIGPIPE, SIG_IGN);
        Trace t(resolve_trace(a->trace.empty() ? std::nullopt : std::optional(a->trace)));
        Tid pid = a->process.resolve(t);
        ServeStart start;
        start.landmarks = !a->no_landmarks;
        start.trust_landmarks = a->trust_landmarks;
        start.reply_dir = a->reply_dir;
        if (!a->from.empty()) {
            start.from = PositionArg::parse(a->from);
            start.from->check_within(t.end() ? t.end()->events : 0);
        }
        replay::ReplayOptions opts;
        opts.echo_output = !a->quiet;
        opts.watchdog = std::chrono::seconds(a->watchdog);
        // On one CPU each event's stop and resume is a context switch, not
        // a cross-CPU wake-up (replay/engine/cpu_pin.h). Not where the tracer's
        // own timer must interrupt the replayed code (no task-clock
        // alarms): it would wait for the CPU the code holds.
        opts.one_cpu = perfclock::task_clock_works();
        if (a->verbose)
            opts.on_event = [](uint64_t index, const Event& e) {
                FormatOptions f;
                f.bytes = 0;
                fmt::print(stderr, "{}\n", format_event(index, e, f));
            };
        if (a->stdio) {
            // gdb owns the terminal and handles ^C itself (it sends an interrupt packet).
            std::signal(SIGINT, SIG_IGN);
            opts.stdout_fd = STDERR_FILENO;
            outcome.exit_code = serve(t, opts, pid, STDIN_FILENO, STDOUT_FILENO, a->error_file, start);
            return;
        }
        UniqueFd conn = accept_one_on_loopback(a->port);
        outcome.exit_code = serve(t, opts, pid, conn.get(), conn.get(), a->error_file, start);
    });
}

} // namespace rw::cli
