// Persistent landmarks with CRIU: see criu_landmark.h for the contract.
#include "criu_landmark.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>

#include "launcher.h"
#include "own_tsc_trap.h"

extern char** environ;

namespace rw::replay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr const char* kDescription = "landmark.txt";

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
    std::string errors = error_lines(log);
    if (!errors.empty())
        msg += "\nerrors in " + log.string() + ":\n" + trimmed(errors);
    std::string tail = last_lines(log, 12);
    if (!tail.empty())
        msg += "\nlast lines of " + log.string() + ":\n" + tail;
    return trimmed(msg);
}

std::vector<char*> c_argv(std::vector<std::string>& argv)
{
    std::vector<char*> out;
    for (auto& a : argv)
        out.push_back(a.data());
    out.push_back(nullptr);
    return out;
}

char proc_state(pid_t pid, pid_t tid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    size_t paren = stat.rfind(')');
    return paren == std::string::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

// Waits until every thread is in a job-control stop ('T').
void wait_stopped(pid_t pid, const std::vector<pid_t>& tids)
{
    auto deadline = Clock::now() + std::chrono::seconds(10);
    for (;;) {
        bool all = true;
        for (pid_t tid : tids)
            all = all && proc_state(pid, tid) == 'T';
        if (all)
            return;
        if (Clock::now() > deadline)
            throw std::runtime_error("process " + std::to_string(pid) + " did not stop within 10 s after SIGSTOP");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
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

user_regs_struct regs_of(pid_t tid)
{
    user_regs_struct regs{};
    if (ptrace(PTRACE_GETREGS, tid, nullptr, &regs) != 0)
        throw std::runtime_error(errno_text("PTRACE_GETREGS of thread " + std::to_string(tid)));
    return regs;
}

std::map<int, std::string> fds_of(pid_t pid)
{
    std::map<int, std::string> fds;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec)) {
        std::error_code lec;
        auto target = fs::read_symlink(e.path(), lec);
        if (!lec)
            fds[std::stoi(e.path().filename().string())] = target.string();
    }
    return fds;
}

uint64_t image_bytes(const fs::path& dir)
{
    uint64_t bytes = 0;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.is_regular_file() && e.path().extension() == ".img")
            bytes += e.file_size();
    return bytes;
}

void write_description(const LandmarkImage& image)
{
    std::ofstream out(image.dir / kDescription);
    out << "pid " << image.pid << "\n";
    for (pid_t tid : image.tids)
        out << "tid " << tid << "\n";
    for (const auto& [fd, what] : image.fds)
        out << "fd " << fd << " " << what << "\n";
    if (!out)
        throw std::runtime_error("cannot write " + (image.dir / kDescription).string());
}

// The name CRIU's --inherit-fd knows a dumped descriptor by.
std::string criu_resource(const std::string& link)
{
    if (link.rfind("pipe:", 0) == 0 || link.rfind("socket:", 0) == 0)
        return link;
    if (!link.empty() && link[0] == '/')
        return link.substr(1);
    throw std::runtime_error("a descriptor on '" + link + "' cannot be replaced at restore");
}

// Host pids of a process's threads and their tids in its own namespace.
std::vector<RestoredLandmark::Thread> threads_of(pid_t pid)
{
    std::vector<RestoredLandmark::Thread> threads;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        pid_t tid = std::stoi(e.path().filename().string());
        std::ifstream in(e.path() / "status");
        pid_t inner = 0;
        for (std::string line; std::getline(in, line);)
            if (line.rfind("NSpid:", 0) == 0) {
                std::istringstream fields(line.substr(6));
                for (pid_t v; fields >> v;)
                    inner = v;
            }
        threads.push_back({tid, inner});
    }
    std::sort(threads.begin(), threads.end(), [pid](const auto& a, const auto& b) {
        return (a.tid == pid) != (b.tid == pid) ? a.tid == pid : a.inner_tid < b.inner_tid;
    });
    return threads;
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

// What the holder reports through its pipe.
struct HolderRecord {
    char kind; // 'E' setup failed (value: errno), 'R' ready for criu, 'C' criu ended, 'X' the copy ended (value:
               // wait status)
    int value;
};

void write_record(int fd, char kind, int value)
{
    HolderRecord r{kind, value};
    while (write(fd, &r, sizeof r) < 0 && errno == EINTR) {
    }
}

bool read_record(int fd, HolderRecord& r)
{
    ssize_t n;
    do
        n = read(fd, &r, sizeof r);
    while (n < 0 && errno == EINTR);
    return n == static_cast<ssize_t>(sizeof r);
}

// The namespace's init. Only async-signal-safe calls: the caller may have
// other threads. Runs criu, reports how it ended, then reaps every orphan
// (the restored copy among them) until none is left.
[[noreturn]] void holder_main(int report, int go, const char* criu, char* const* argv, char* const* envp,
                              const std::vector<int>& inherited, int out_fd, int null_fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
        write_record(report, 'E', errno);
        _exit(1);
    }
    // The caller prepares the namespace (mounts), then says go: one byte.
    write_record(report, 'R', 0);
    char byte = 0;
    ssize_t got;
    do
        got = read(go, &byte, 1);
    while (got < 0 && errno == EINTR);
    if (got != 1 || byte != 'G')
        _exit(1);
    // A raw clone rather than fork(): glibc's fork takes locks another
    // thread of the caller may have held when the holder was cloned.
    long child = syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (child == 0) {
        prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0); // criu reads the TSC (own_tsc_trap.h)
        for (int fd : inherited)
            fcntl(fd, F_SETFD, 0);
        dup2(null_fd, 0);
        dup2(out_fd, 1);
        dup2(out_fd, 2);
        execve(criu, argv, envp);
        _exit(127);
    }
    if (child < 0) {
        write_record(report, 'E', errno);
        _exit(1);
    }
    int status = 0;
    while (waitpid(static_cast<pid_t>(child), &status, 0) < 0 && errno == EINTR) {
    }
    write_record(report, 'C', status);
    for (;;) {
        pid_t w = waitpid(-1, &status, __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            break;
        write_record(report, 'X', status);
    }
    _exit(0);
}

} // namespace

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
                          std::chrono::seconds timeout, int mount_ns)
{
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        throw std::runtime_error(errno_text("pipe"));
    std::vector<std::string> copy = argv;
    auto args = c_argv(copy);
    std::vector<std::string> envs = environment_with(env);
    auto envp = c_argv(envs);
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

LandmarkImage dump_landmark(const std::string& criu, pid_t pid, const std::vector<pid_t>& tids, const fs::path& dir,
                            unsigned long ptrace_options)
{
    if (tids.empty() || tids.front() != pid)
        throw std::runtime_error("dump_landmark: the thread list must start with the main thread " +
                                 std::to_string(pid));
    if (!executable(criu))
        throw std::runtime_error("CRIU not found ('" + criu + "'): run scripts/install-criu.sh");
    fs::create_directories(dir);
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".img")
            throw std::runtime_error(dir.string() + " already holds a CRIU image");

    std::vector<user_regs_struct> before;
    for (pid_t tid : tids) {
        before.push_back(regs_of(tid));
        auto orig = static_cast<long long>(before.back().orig_rax);
        if (orig != -1)
            throw std::runtime_error("thread " + std::to_string(tid) + " is stopped inside system call " +
                                     std::to_string(orig) +
                                     ": a landmark must be taken at a stop outside system calls (CRIU would "
                                     "restart or interrupt the call)");
    }

    LandmarkImage image;
    image.dir = dir;
    image.pid = pid;
    image.tids = tids;
    image.fds = fds_of(pid);

    // A traced process cannot be dumped: let every thread fall into a
    // job-control stop instead of the caller's ptrace-stop.
    auto t0 = Clock::now();
    if (::kill(pid, SIGSTOP) != 0)
        throw std::runtime_error(errno_text("SIGSTOP to process " + std::to_string(pid)));
    std::vector<pid_t> detached;
    std::string failure;
    for (pid_t tid : tids) {
        if (ptrace(PTRACE_DETACH, tid, nullptr, SIGSTOP) != 0) {
            failure = errno_text("PTRACE_DETACH of thread " + std::to_string(tid));
            break;
        }
        detached.push_back(tid);
    }
    if (failure.empty()) {
        try {
            wait_stopped(pid, tids);
        } catch (const std::exception& e) {
            failure = e.what();
        }
    }
    auto t1 = Clock::now();
    ProgramOutput criu_run;
    if (failure.empty()) {
        // In another mount namespace than ours, CRIU would try to dump that
        // namespace's mounts; from inside it, it sees its files as they are.
        int ns = -1;
        struct stat mine {
        }, theirs{};
        std::string ns_path = "/proc/" + std::to_string(pid) + "/ns/mnt";
        if (stat("/proc/self/ns/mnt", &mine) == 0 && stat(ns_path.c_str(), &theirs) == 0 &&
            mine.st_ino != theirs.st_ino)
            ns = open(ns_path.c_str(), O_RDONLY | O_CLOEXEC);
        criu_run = run_program({criu, "dump", "-t", std::to_string(pid), "-D", fs::absolute(dir).string(),
                                "--leave-stopped", "--shell-job", "-o", "dump.log", "-v4"},
                               criu_environment(), std::chrono::seconds(120), ns);
        if (ns >= 0)
            close(ns);
        if (criu_run.status != 0)
            failure = criu_failure("criu dump of process " + std::to_string(pid), criu_run.status, criu_run.output,
                                   dir / "dump.log");
    }
    auto t2 = Clock::now();
    // The caller gets its threads back whatever happened.
    for (pid_t tid : detached) {
        try {
            seize_stopped(tid, ptrace_options);
        } catch (const std::exception& e) {
            failure += (failure.empty() ? "" : "\n") + std::string(e.what());
        }
    }
    auto t3 = Clock::now();
    if (!failure.empty())
        throw std::runtime_error(failure);
    for (size_t i = 0; i < tids.size(); i++) {
        user_regs_struct after = regs_of(tids[i]);
        if (std::memcmp(&after, &before[i], sizeof after) != 0)
            throw std::runtime_error("thread " + std::to_string(tids[i]) + "'s registers changed across criu dump");
    }
    image.stop_time = t1 - t0;
    image.criu_time = t2 - t1;
    image.seize_time = t3 - t2;
    image.bytes = image_bytes(dir);
    write_description(image);
    return image;
}

LandmarkImage read_landmark(const fs::path& dir)
{
    std::ifstream in(dir / kDescription);
    if (!in)
        throw std::runtime_error(dir.string() + " holds no landmark (" + kDescription + " missing)");
    LandmarkImage image;
    image.dir = dir;
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        std::string key;
        fields >> key;
        if (key == "pid") {
            fields >> image.pid;
        } else if (key == "tid") {
            pid_t tid = 0;
            fields >> tid;
            image.tids.push_back(tid);
        } else if (key == "fd") {
            int fd = -1;
            fields >> fd;
            std::string rest;
            std::getline(fields, rest);
            image.fds[fd] = rest.empty() ? rest : rest.substr(1);
        }
    }
    if (image.pid <= 0 || image.tids.empty())
        throw std::runtime_error((dir / kDescription).string() + " is not a landmark description");
    image.bytes = image_bytes(dir);
    return image;
}

RestoredLandmark RestoredLandmark::restore(const std::string& criu, const fs::path& dir,
                                           const std::map<int, int>& inherit, unsigned long ptrace_options,
                                           const Prepare& prepare)
{
    if (!executable(criu))
        throw std::runtime_error("CRIU not found ('" + criu + "'): run scripts/install-criu.sh");
    LandmarkImage image = read_landmark(dir);
    // CRIU's log, output and statistics go to a private directory: the
    // image directory (inside a trace) stays as it was written, and two
    // replays may restore the same image at once.
    char work_template[] = "/tmp/rewind-restore-XXXXXX";
    if (!mkdtemp(work_template))
        throw std::runtime_error(errno_text("creating a directory for criu restore's log"));
    fs::path work = work_template;
    struct RemoveWork {
        fs::path dir;
        ~RemoveWork()
        {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } remove_work{work};

    // Everything the holder needs is prepared here: after the clone it may
    // only make async-signal-safe calls.
    std::vector<std::string> argv = {criu,
                                     "restore",
                                     "-D",
                                     fs::absolute(dir).string(),
                                     "--restore-detached",
                                     "--leave-stopped",
                                     "--shell-job",
                                     "-W",
                                     work.string(),
                                     "-o",
                                     "restore.log",
                                     "-v4"};
    std::vector<int> inherited;
    auto close_all = [&inherited] {
        for (int fd : inherited)
            close(fd);
    };
    for (const auto& [target, source] : inherit) {
        auto it = image.fds.find(target);
        if (it == image.fds.end()) {
            close_all();
            throw std::runtime_error("the dumped process had no descriptor " + std::to_string(target) + " to replace");
        }
        int copy = fcntl(source, F_DUPFD_CLOEXEC, 10);
        if (copy < 0) {
            close_all();
            throw std::runtime_error(errno_text("duplicating descriptor " + std::to_string(source)));
        }
        inherited.push_back(copy);
        argv.push_back("--inherit-fd");
        argv.push_back("fd[" + std::to_string(copy) + "]:" + criu_resource(it->second));
    }
    auto args = c_argv(argv);
    std::vector<std::string> envs = environment_with(criu_environment());
    auto envp = c_argv(envs);
    fs::path out_path = work / "restore.out";
    int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int report[2] = {-1, -1};
    int go[2] = {-1, -1};
    if (out_fd < 0 || null_fd < 0 || pipe2(report, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
        std::string err = errno_text("preparing criu restore");
        close_all();
        close(out_fd);
        close(null_fd);
        for (int fd : {report[0], report[1], go[0], go[1]})
            if (fd >= 0)
                close(fd);
        throw std::runtime_error(err);
    }

    auto t0 = Clock::now();
    long holder = syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, nullptr, nullptr, nullptr, nullptr);
    if (holder == 0)
        holder_main(report[1], go[0], args[0], args.data(), envp.data(), inherited, out_fd, null_fd);
    int clone_errno = errno;
    close(report[1]);
    close(go[0]);
    close_all();
    close(out_fd);
    close(null_fd);
    if (holder < 0) {
        close(report[0]);
        close(go[1]);
        errno = clone_errno;
        throw std::runtime_error(errno_text("creating a pid and mount namespace (clone)"));
    }

    RestoredLandmark restored;
    restored.holder_ = static_cast<pid_t>(holder);
    restored.status_fd_ = report[0];
    HolderRecord r{};
    if (!read_record(report[0], r) || r.kind != 'R') {
        close(go[1]);
        errno = r.kind == 'E' ? r.value : EIO;
        std::string err = errno_text("setting up the restore namespace (mount /proc)");
        restored.kill();
        throw std::runtime_error(err);
    }
    std::string prepared = prepare ? prepare(restored.holder_) : "";
    if (!prepared.empty()) {
        close(go[1]);
        restored.kill();
        throw std::runtime_error("preparing the restore namespace: " + prepared);
    }
    ssize_t sent;
    do
        sent = write(go[1], "G", 1);
    while (sent < 0 && errno == EINTR);
    close(go[1]);
    pollfd p{report[0], POLLIN, 0};
    int ready;
    do
        ready = poll(&p, 1, 120 * 1000);
    while (ready < 0 && errno == EINTR);
    if (ready == 0) {
        restored.kill();
        throw std::runtime_error(trimmed("criu restore from " + dir.string() + " did not end within 120 s; " +
                                         "last lines of restore.log:\n" + last_lines(work / "restore.log", 12)));
    }
    if (!read_record(report[0], r) || r.kind == 'E') {
        errno = r.kind == 'E' ? r.value : EIO;
        std::string err = errno_text("setting up the restore namespace (mount /proc)");
        restored.kill();
        throw std::runtime_error(err);
    }
    restored.criu_time_ = Clock::now() - t0;
    std::string printed;
    {
        std::ifstream in(out_path);
        printed.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    if (r.kind != 'C' || r.value != 0) {
        std::string err = criu_failure("criu restore from " + dir.string(), r.value, printed, work / "restore.log");
        restored.kill();
        throw std::runtime_error(err);
    }

    // The copy is the holder's only child now that criu has ended.
    pid_t root = 0;
    {
        std::string h = std::to_string(holder);
        std::ifstream in("/proc/" + h + "/task/" + h + "/children");
        in >> root;
    }
    if (root <= 0) {
        restored.kill();
        throw std::runtime_error("criu restore from " + dir.string() + " left no process in its namespace");
    }
    try {
        restored.threads_ = threads_of(root);
        for (const auto& t : restored.threads_)
            seize_stopped(t.tid, ptrace_options);
    } catch (...) {
        restored.kill();
        throw;
    }
    if (restored.threads_.front().inner_tid != image.pid || restored.threads_.size() != image.tids.size()) {
        std::string err = "the restored copy has pid " + std::to_string(restored.threads_.front().inner_tid) + " and " +
                          std::to_string(restored.threads_.size()) + " threads; the image has pid " +
                          std::to_string(image.pid) + " and " + std::to_string(image.tids.size());
        restored.kill();
        throw std::runtime_error(err);
    }
    return restored;
}

RestoredLandmark::RestoredLandmark(RestoredLandmark&& other) noexcept
    : holder_(std::exchange(other.holder_, 0)), status_fd_(std::exchange(other.status_fd_, -1)),
      threads_(std::move(other.threads_)), criu_time_(other.criu_time_)
{
    other.threads_.clear();
}

RestoredLandmark& RestoredLandmark::operator=(RestoredLandmark&& other) noexcept
{
    if (this != &other) {
        kill();
        holder_ = std::exchange(other.holder_, 0);
        status_fd_ = std::exchange(other.status_fd_, -1);
        threads_ = std::move(other.threads_);
        other.threads_.clear();
        criu_time_ = other.criu_time_;
    }
    return *this;
}

RestoredLandmark::~RestoredLandmark()
{
    kill();
}

int RestoredLandmark::wait_holder()
{
    int status = -1;
    HolderRecord r{};
    while (holder_ > 0 && read_record(status_fd_, r))
        if (r.kind == 'X')
            status = r.value;
    // The holder, the namespace's init, ends only once every process in it
    // is reaped, and a traced thread's exit is ours to collect first (a
    // caller that waited for the copy's main thread may not have seen
    // another thread's).
    if (holder_ > 0 && !reap_until_holder_ends(std::chrono::seconds(10))) {
        ::kill(holder_, SIGKILL);
        reap_until_holder_ends(std::chrono::seconds(10));
    }
    holder_ = 0;
    threads_.clear();
    if (status_fd_ >= 0)
        close(status_fd_);
    status_fd_ = -1;
    return status;
}

bool RestoredLandmark::reap_until_holder_ends(std::chrono::seconds limit)
{
    // The traced threads and every other traced process in the namespace
    // (copies a replay made of the restored one, reparented to the holder
    // as they lost their parents): the holder waits for them all to be
    // reaped.
    auto deadline = Clock::now() + limit;
    for (;;) {
        pid_t w = waitpid(holder_, nullptr, WNOHANG);
        if (w == holder_ || (w < 0 && errno != EINTR))
            return true;
        for (const auto& t : threads_)
            waitpid(t.tid, nullptr, __WALL | WNOHANG);
        std::string h = std::to_string(holder_);
        std::ifstream children("/proc/" + h + "/task/" + h + "/children");
        for (pid_t child; children >> child;)
            waitpid(child, nullptr, __WALL | WNOHANG);
        if (Clock::now() > deadline)
            return false; // (something else holds them: the holder stays a zombie of ours)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void RestoredLandmark::kill()
{
    if (holder_ > 0) {
        // The namespace's init dying kills everything in it; the traced
        // threads' exits are ours to collect before the holder can end.
        ::kill(holder_, SIGKILL);
        for (const auto& t : threads_) {
            int status;
            while (waitpid(t.tid, &status, __WALL) > 0 && !WIFEXITED(status) && !WIFSIGNALED(status)) {
            }
        }
        reap_until_holder_ends(std::chrono::seconds(10));
        holder_ = 0;
    }
    threads_.clear();
    if (status_fd_ >= 0)
        close(status_fd_);
    status_fd_ = -1;
}

} // namespace rw::replay
