// Restoring a CRIU landmark in a pid and mount namespace of its own, held
// by a small init that runs criu and reaps what it restored.
#include "criu_landmark.h"
#include "criu_support.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "launcher.h"

namespace rw::replay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace criu_support;

namespace {

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
    std::vector<std::string> argv = {criu, "restore", "-D", fs::absolute(dir).string(), "--restore-detached",
                                     "--leave-stopped", "--shell-job",
                                     // The trace's copy of a mapped file stands at its path with the
                                     // trace's private mode, not the original's (a start image was
                                     // dumped from the live process).
                                     "--skip-file-rwx-check", "-W", work.string(), "-o", "restore.log", "-v4"};
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
    auto args = c_strings(argv);
    std::vector<std::string> envs = environment_with(criu_environment());
    auto envp = c_strings(envs);
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
    let_go();
    return status;
}

void RestoredLandmark::let_go()
{
    threads_.clear();
    if (status_fd_ >= 0)
        close(status_fd_);
    status_fd_ = -1;
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
    let_go();
}

} // namespace rw::replay
