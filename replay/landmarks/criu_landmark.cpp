// Persistent landmarks with CRIU: see criu_landmark.h for the contract.
// Dumping a stopped replay, and reading an image's description.
#include "criu_landmark.h"
#include "criu_support.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace rw::replay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace criu_support;

namespace {

constexpr const char* kDescription = "landmark.txt";

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

} // namespace

namespace {

// An open /proc/PID/ns/KIND if process `pid` is in another namespace of
// that kind than rewind, else -1.
int other_namespace(pid_t pid, const char* kind)
{
    struct stat mine {
    }, theirs{};
    std::string path = "/proc/" + std::to_string(pid) + "/ns/" + kind;
    if (stat((std::string("/proc/self/ns/") + kind).c_str(), &mine) == 0 && stat(path.c_str(), &theirs) == 0 &&
        mine.st_ino != theirs.st_ino)
        return open(path.c_str(), O_RDONLY | O_CLOEXEC);
    return -1;
}

// Its id in its own (innermost) pid namespace (NSpid's last field).
pid_t innermost_pid(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind("NSpid:", 0) == 0) {
            std::istringstream ids(line.substr(6));
            pid_t id = pid;
            for (pid_t x; ids >> x;)
                id = x;
            return id;
        }
    return pid;
}

} // namespace

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
        int ns = other_namespace(pid, "mnt");
        // (A replay restored from a landmark runs in a pid namespace of its
        // own: CRIU runs there, where /proc is that namespace's, and names
        // the process by its id there.)
        int pid_ns = ns >= 0 ? other_namespace(pid, "pid") : -1;
        pid_t named = pid_ns >= 0 ? innermost_pid(pid) : pid;
        if (pid_ns >= 0) {
            // The image holds the ids CRIU saw, which a restore gives back.
            image.pid = named;
            for (pid_t& tid : image.tids)
                tid = innermost_pid(tid);
        }
        criu_run = run_program({criu, "dump", "-t", std::to_string(named), "-D", fs::absolute(dir).string(),
                                "--leave-stopped", "--shell-job", "-o", "dump.log", "-v4"},
                               criu_environment(), std::chrono::seconds(120), ns, pid_ns);
        if (ns >= 0)
            close(ns);
        if (pid_ns >= 0)
            close(pid_ns);
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

LandmarkImage dump_parked_copy(const std::string& criu, pid_t pid, const fs::path& dir)
{
    if (!executable(criu))
        throw std::runtime_error("CRIU not found ('" + criu + "'): run scripts/install-criu.sh");
    fs::create_directories(dir);
    LandmarkImage image;
    image.dir = dir;
    image.pid = pid;
    image.tids = {pid};
    image.fds = fds_of(pid);
    auto t0 = Clock::now();
    ProgramOutput criu_run = run_program({criu, "dump", "-t", std::to_string(pid), "-D", fs::absolute(dir).string(),
                                          "--shell-job", "-o", "dump.log", "-v4"},
                                         criu_environment(), std::chrono::seconds(120), -1);
    if (criu_run.status != 0)
        throw std::runtime_error(criu_failure("criu dump of process " + std::to_string(pid), criu_run.status,
                                              criu_run.output, dir / "dump.log"));
    image.criu_time = Clock::now() - t0;
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

} // namespace rw::replay
