#include "gdb_launch.h"

#include <algorithm>
#include <fmt/core.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <system_error>

#include "gdb_host_files.h"
#include "gdbinit_script.h"
#include "usage_error.h"
#include "trace.h"

namespace rw::cli {
namespace {

std::string shell_quote(const std::string& s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

void write_file(const std::filesystem::path& path, std::string_view text)
{
    FILE* f = std::fopen(path.c_str(), "w");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0)
        throw std::system_error(errno, std::generic_category(), "cannot write " + path.string());
}

// The program and its libraries under their recorded paths, as links to
// the trace's copies.
void build_sysroot(const std::filesystem::path& root, const Trace& trace)
{
    replay::HostFiles files(trace);
    for (const auto& [path, copy] : files.copies()) {
        // A recorded path is a name from the trace: one that would lead out
        // of the sysroot ("/../..") is not linked.
        std::filesystem::path normal = std::filesystem::path(path).lexically_normal();
        if (!normal.is_absolute() || std::find(normal.begin(), normal.end(), "..") != normal.end())
            continue;
        // gdb follows the link: only to a copy that is a regular file of
        // the trace and holds what its name says.
        if (!files.open_copy(copy))
            continue;
        std::filesystem::path link = root / normal.relative_path();
        std::error_code ec;
        std::filesystem::create_directories(link.parent_path(), ec);
        std::filesystem::create_symlink(std::filesystem::absolute(copy), link, ec);
    }
}

} // namespace

GdbSupport::GdbSupport(const Trace& trace, std::vector<std::string> serve_options)
    : trace_dir_(std::filesystem::absolute(trace.dir())), serve_options_(std::move(serve_options))
{
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/rewind-gdb-XXXXXX";
    if (!::mkdtemp(templ.data()))
        throw std::system_error(errno, std::generic_category(), "cannot create a directory in " + templ);
    dir_ = templ;
    write_file(init_script(), replay::kGdbInitScript);
    build_sysroot(sysroot(), trace);
}

GdbSupport::~GdbSupport()
{
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

std::string GdbSupport::target_command() const
{
    std::string self = std::filesystem::read_symlink("/proc/self/exe");
    std::string command = "target extended-remote | " + shell_quote(self) + " serve --stdio --error-file " +
                          shell_quote((dir_ / "server-error").string());
    for (const auto& o : serve_options_)
        command += " " + shell_quote(o);
    return command + " " + shell_quote(trace_dir_);
}

void rethrow_with_server_error(const GdbSupport& support, const std::exception& e)
{
    if (std::string why = support.server_error(); !why.empty()) {
        std::string message = std::string(e.what()) + "; the server ended with:\n  " + why;
        if (int status = support.server_status())
            throw UsageError(message, status);
        throw std::runtime_error(message);
    }
    throw;
}

std::string GdbSupport::server_error() const
{
    std::ifstream in(dir_ / "server-error");
    return std::string(std::istreambuf_iterator<char>(in), {});
}

int GdbSupport::server_status() const
{
    std::ifstream in(dir_ / "server-error.status");
    int status = 0;
    if (!(in >> status) || status < 90 || status > 93)
        return 0;
    return status;
}

void check_gdb(const std::string& gdb)
{
    if (::access(gdb.c_str(), X_OK) != 0)
        throw UsageError(
            fmt::format("cannot run gdb at {} ({}); install gdb or give --gdb PATH", gdb, std::strerror(errno)));
}

int run_gdb(const std::string& gdb, const Trace& trace, const std::vector<std::string>& gdb_args,
            const std::vector<std::string>& serve_options)
{
    check_gdb(gdb);
    GdbSupport support(trace, serve_options);
    std::vector<std::string> argv = {gdb,   "-q",
                                     "-x",  support.init_script(),
                                     "-ex", "set remotetimeout 100000",
                                     "-ex", "set sysroot " + support.sysroot(),
                                     "-ex", support.target_command()};
    argv.insert(argv.end(), gdb_args.begin(), gdb_args.end());
    std::vector<char*> cargv;
    for (auto& s : argv)
        cargv.push_back(s.data());
    cargv.push_back(nullptr);

    // gdb owns the terminal while it runs: ^C is its business.
    struct sigaction ignore {
    }, old_int{}, old_quit{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ignore, &old_int);
    ::sigaction(SIGQUIT, &ignore, &old_quit);
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid == 0) {
        ::sigaction(SIGINT, &old_int, nullptr);
        ::sigaction(SIGQUIT, &old_quit, nullptr);
        // gdb goes with rewind: killed outright, rewind would leave it
        // holding the terminal and its replay server running. (The server
        // ends when gdb closes its pipe.)
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent)
            ::_exit(127); // rewind died before the line above
        ::execv(gdb.c_str(), cargv.data());
        fmt::print(stderr, "rewind: cannot run {}: {}\n", gdb, std::strerror(errno));
        ::_exit(127);
    }
    int status = 0;
    while (pid > 0 && ::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    if (pid < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace rw::cli
