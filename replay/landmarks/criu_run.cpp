// Running criu, and the helpers the landmark dump and restore share.
#include "criu_landmark.h"
#include "criu_support.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <thread>

#include "launcher.h"
#include "own_tsc_trap.h"

extern char** environ;

namespace rw::replay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace criu_support {

std::string errno_text(const std::string& what)
{
    return what + ": " + std::strerror(errno);
}

bool executable(const std::string& path)
{
    std::error_code ec;
    return !path.empty() && ::access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path, ec);
}

// The last `n` lines of a text file, or "" when it cannot be read.
std::string last_lines(const fs::path& file, size_t n)
{
    std::ifstream in(file);
    std::deque<std::string> lines;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
        if (lines.size() > n)
            lines.pop_front();
    }
    std::string out;
    for (const auto& l : lines)
        out += "  " + l + "\n";
    return out;
}

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::string describe_status(int status)
{
    if (WIFEXITED(status))
        return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("killed by ") + strsignal(WTERMSIG(status));
    return "wait status " + std::to_string(status);
}

// CRIU's own error lines in its log, with the lines that lead to the first
// one. The log's end is usually the clean-up after the failure (curing the
// parasite, unfreezing), which does not say what failed. The rlimit error is
// left out: criu prints it on every run where it may not raise its own
// descriptor limit, and carries on.
std::string error_lines(const fs::path& log)
{
    std::ifstream in(log);
    std::deque<std::string> before;
    std::vector<std::string> errors;
    std::string lead;
    for (std::string line; std::getline(in, line) && errors.size() < 8;) {
        bool error =
            line.find("Error (") != std::string::npos && line.find("Can't setup RLIMIT_NOFILE") == std::string::npos &&
            line.find("Dumping FAILED") == std::string::npos && line.find("Restoring FAILED") == std::string::npos;
        if (error) {
            if (errors.empty())
                for (const auto& l : before)
                    lead += "  " + l + "\n";
            errors.push_back(line);
        }
        before.push_back(line);
        if (before.size() > 6)
            before.pop_front();
    }
    if (errors.empty())
        return "";
    std::string out = lead;
    for (const auto& e : errors)
        out += "  " + e + "\n";
    return out;
}

// Why a criu run failed: its status, what it printed, its log's errors and
// its log's end.
std::string criu_failure(const std::string& what, int status, const std::string& printed, const fs::path& log)
{
    std::string msg = what + " failed (criu " + describe_status(status) + ")";
    if (!trimmed(printed).empty())
        msg += "\ncriu printed:\n" + trimmed(printed);
    // The log is quoted, not named by its path: it lives in a directory
    // removed with the failed attempt.
    std::string name = "criu's " + log.filename().string();
    std::string errors = error_lines(log);
    if (!errors.empty())
        msg += "\nerrors in " + name + ":\n" + trimmed(errors);
    std::string tail = last_lines(log, 12);
    if (!tail.empty())
        msg += "\nlast lines of " + name + ":\n" + tail;
    return trimmed(msg);
}

// Seizes a thread that is in a job-control stop and consumes the
// PTRACE_EVENT_STOP the kernel reports for it.
void seize_stopped(pid_t tid, unsigned long options)
{
    if (ptrace(PTRACE_SEIZE, tid, nullptr, options) != 0)
        throw std::runtime_error(errno_text("PTRACE_SEIZE of thread " + std::to_string(tid)));
    int status = 0;
    for (int round = 0;; round++) {
        pid_t w;
        do
            w = waitpid(tid, &status, __WALL);
        while (w < 0 && errno == EINTR);
        if (w != tid)
            throw std::runtime_error(errno_text("waitpid for thread " + std::to_string(tid)));
        // A SIGSTOP still pending when the thread was seized is reported
        // first as its delivery: delivering it makes the group-stop.
        if (round < 3 && WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP && (status >> 16) == 0) {
            if (ptrace(PTRACE_CONT, tid, nullptr, SIGSTOP) != 0)
                throw std::runtime_error(errno_text("PTRACE_CONT of thread " + std::to_string(tid)));
            continue;
        }
        break;
    }
    if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP)
        throw std::runtime_error("thread " + std::to_string(tid) + " seized after its stop reports " +
                                 describe_status(status) + " rather than a group-stop");
}

// This process's environment with `extra` (NAME=value) replacing or adding.
std::vector<std::string> environment_with(const std::vector<std::string>& extra)
{
    std::vector<std::string> env;
    for (char** e = environ; e && *e; e++) {
        std::string entry = *e;
        bool replaced = false;
        for (const auto& x : extra)
            replaced = replaced || entry.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
        if (!replaced)
            env.push_back(entry);
    }
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

} // namespace criu_support

using namespace criu_support;

std::string find_criu()
{
    if (const char* env = std::getenv("REWIND_CRIU"); env && *env)
        return executable(env) ? env : find_program(env);
    if (executable(kCriuPrivatePath))
        return kCriuPrivatePath;
    return find_program("criu");
}

std::vector<std::string> criu_environment()
{
    return {"CRIU_FAULT=130"};
}

ProgramOutput run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::chrono::seconds timeout, int mount_ns, int pid_ns)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        throw std::runtime_error(errno_text("pipe"));
    std::vector<std::string> copy = argv;
    auto args = c_strings(copy);
    std::vector<std::string> envs = environment_with(env);
    auto envp = c_strings(envs);
    pid_t pid = 0;
    int err = 0;
    if (mount_ns < 0) {
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_adddup2(&actions, pipefd[1], 1);
        posix_spawn_file_actions_adddup2(&actions, pipefd[1], 2);
        PlainTscForChildren plain_tsc;
        err = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
        posix_spawn_file_actions_destroy(&actions);
    } else {
        // posix_spawn cannot enter a namespace. A raw clone, and only
        // async-signal-safe calls in the child (the caller may have threads).
        int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        // A pid namespace is entered by the children made after setns: this
        // thread's, for this one clone only.
        int own_pid_ns = pid_ns >= 0 ? open("/proc/thread-self/ns/pid_for_children", O_RDONLY | O_CLOEXEC) : -1;
        if (pid_ns >= 0 && (own_pid_ns < 0 || setns(pid_ns, CLONE_NEWPID) != 0)) {
            if (own_pid_ns >= 0)
                close(own_pid_ns);
            own_pid_ns = -1;
        }
        long child = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
        if (child == 0) {
            prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0); // (own_tsc_trap.h)
            if (setns(mount_ns, CLONE_NEWNS) != 0)
                _exit(126);
            dup2(null_fd, 0);
            dup2(pipefd[1], 1);
            dup2(pipefd[1], 2);
            execve(args[0], args.data(), envp.data());
            _exit(127);
        }
        err = child < 0 ? errno : 0;
        pid = static_cast<pid_t>(child);
        if (own_pid_ns >= 0) {
            setns(own_pid_ns, CLONE_NEWPID);
            close(own_pid_ns);
        }
        if (null_fd >= 0)
            close(null_fd);
    }
    close(pipefd[1]);
    if (err != 0) {
        close(pipefd[0]);
        errno = err;
        throw std::runtime_error(errno_text("running " + argv[0]));
    }
    ProgramOutput result;
    std::array<char, 4096> buf;
    auto deadline = Clock::now() + timeout;
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        pollfd p{pipefd[0], POLLIN, 0};
        int ready = left > 0 ? poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000))) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            if (Clock::now() < deadline)
                continue;
            ::kill(pid, SIGKILL);
            result.output += "\n(killed after " + std::to_string(timeout.count()) + " s)";
            break;
        }
        ssize_t n = read(pipefd[0], buf.data(), buf.size());
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        result.output.append(buf.data(), n);
    }
    close(pipefd[0]);
    while (waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
    }
    return result;
}

std::string criu_version(const std::string& criu)
{
    if (!executable(criu))
        return "";
    ProgramOutput out = run_program({criu, "--version"});
    std::istringstream lines(out.output);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("Version:", 0) == 0) {
            std::string v = line.substr(8);
            v.erase(0, v.find_first_not_of(' '));
            return trimmed(v);
        }
    return "";
}

bool version_at_least(const std::string& version, int major, int minor)
{
    int ma = 0, mi = 0;
    if (std::sscanf(version.c_str(), "%d.%d", &ma, &mi) < 1)
        return false;
    return ma > major || (ma == major && mi >= minor);
}

} // namespace rw::replay
