// Exercises replay/landmarks/criu_landmark for real: starts tests/programs/landmark_target,
// seizes it at a stop outside system calls, dumps it with CRIU, restores a copy
// into a new pid namespace, compares the copy's registers and memory with the
// original's, runs both to completion and compares what they print.
//
// Usage: landmark_check PROGRAM THREADS MEGABYTES WORKDIR
// Exit status: 0 all checks passed, 1 a check failed, 77 this machine cannot
// run the check (the reason is printed).
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "criu_landmark.h"

extern char** environ;

using namespace rw::replay;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

constexpr unsigned long kOptions = PTRACE_O_EXITKILL;
constexpr int kSkip = 77;

#ifndef PTRACE_GET_RSEQ_CONFIGURATION
#define PTRACE_GET_RSEQ_CONFIGURATION 0x420f
#endif
struct RseqConfiguration {
    uint64_t rseq_abi_pointer;
    uint32_t rseq_abi_size;
    uint32_t signature;
    uint32_t flags;
    uint32_t pad;
};

[[noreturn]] void skip(const std::string& why)
{
    std::printf("SKIP: %s\n", why.c_str());
    std::exit(kSkip);
}

struct Failure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

void check(bool ok, const std::string& what)
{
    if (!ok)
        throw Failure(what);
}

double seconds(std::chrono::duration<double> d)
{
    return d.count();
}

// Reads one line from a pipe, waiting at most 60 s.
std::string read_line(int fd)
{
    std::string line;
    auto deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        if (poll(&p, 1, 100) == 1) {
            char c;
            if (read(fd, &c, 1) != 1)
                throw Failure("the program ended before printing its go line");
            if (c == '\n')
                return line;
            line += c;
        }
        if (Clock::now() > deadline)
            throw Failure("the program printed no go line within 60 s");
    }
}

std::string read_all(int fd)
{
    std::string out;
    char buf[4096];
    for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
        out.append(buf, n);
    return out;
}

std::vector<pid_t> threads_of(pid_t pid)
{
    std::vector<pid_t> tids = {pid};
    std::set<pid_t> others;
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task"))
        if (pid_t t = std::stoi(e.path().filename().string()); t != pid)
            others.insert(t);
    tids.insert(tids.end(), others.begin(), others.end());
    return tids;
}

int wait_stop(pid_t tid)
{
    int status = 0;
    if (waitpid(tid, &status, __WALL) != tid)
        throw Failure("waitpid " + std::to_string(tid) + ": " + std::strerror(errno));
    return status;
}

user_regs_struct regs_of(pid_t tid)
{
    user_regs_struct r{};
    if (ptrace(PTRACE_GETREGS, tid, nullptr, &r) != 0)
        throw Failure("PTRACE_GETREGS " + std::to_string(tid) + ": " + std::strerror(errno));
    return r;
}

user_fpregs_struct fpregs_of(pid_t tid)
{
    user_fpregs_struct r{};
    if (ptrace(PTRACE_GETFPREGS, tid, nullptr, &r) != 0)
        throw Failure("PTRACE_GETFPREGS " + std::to_string(tid) + ": " + std::strerror(errno));
    return r;
}

// Seizes every thread of a running process at a stop outside system calls.
std::vector<pid_t> seize_clean(pid_t pid)
{
    std::vector<pid_t> tids = threads_of(pid);
    for (pid_t t : tids)
        if (ptrace(PTRACE_SEIZE, t, nullptr, kOptions) != 0)
            throw Failure("PTRACE_SEIZE: " + std::string(std::strerror(errno)));
    for (int attempt = 0; attempt < 100; attempt++) {
        for (pid_t t : tids) {
            ptrace(PTRACE_INTERRUPT, t, nullptr, nullptr);
            wait_stop(t);
        }
        bool clean = true;
        for (pid_t t : tids)
            clean = clean && static_cast<long long>(regs_of(t).orig_rax) == -1;
        if (clean)
            return tids;
        for (pid_t t : tids)
            ptrace(PTRACE_CONT, t, nullptr, nullptr);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    throw Failure("could not stop every thread outside a system call in 100 tries");
}

struct Region {
    uint64_t start = 0, end = 0;
    std::string perms, path;
    bool operator==(const Region&) const = default;
};

std::vector<Region> regions_of(pid_t pid)
{
    std::vector<Region> regions;
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    for (std::string line; std::getline(in, line);) {
        Region r;
        std::istringstream f(line);
        std::string range, offset, dev, inode;
        f >> range >> r.perms >> offset >> dev >> inode;
        std::getline(f, r.path);
        r.path.erase(0, r.path.find_first_not_of(' '));
        r.start = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        r.end = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
        regions.push_back(r);
    }
    return regions;
}

std::string describe(const Region& r)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%" PRIx64 "-%" PRIx64 " ", r.start, r.end);
    return buf + r.perms + " " + r.path;
}

std::vector<char> read_memory(pid_t pid, const Region& r)
{
    std::vector<char> bytes(r.end - r.start);
    int fd = open(("/proc/" + std::to_string(pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : pread(fd, bytes.data(), bytes.size(), static_cast<off_t>(r.start));
    close(fd);
    if (n != static_cast<ssize_t>(bytes.size()))
        throw Failure("cannot read " + describe(r) + " of process " + std::to_string(pid));
    return bytes;
}

struct MemoryReport {
    size_t regions = 0;
    uint64_t bytes = 0;
    uint64_t rseq_bytes = 0; // differing bytes inside the threads' rseq areas
};

// Compares two processes' memory; differences are allowed only inside
// `allowed` ranges (glibc's rseq areas, where the kernel writes the cpu id).
MemoryReport compare_memory(pid_t a, pid_t b, const std::vector<std::pair<uint64_t, uint64_t>>& allowed)
{
    auto ra = regions_of(a), rb = regions_of(b);
    std::string diff;
    for (size_t i = 0; i < std::max(ra.size(), rb.size()); i++) {
        std::string x = i < ra.size() ? describe(ra[i]) : "(none)", y = i < rb.size() ? describe(rb[i]) : "(none)";
        if (x != y)
            diff += "\n  " + x + "  vs  " + y;
    }
    check(diff.empty(), "memory maps differ:" + diff);
    MemoryReport report;
    for (const auto& r : ra) {
        if (r.perms[0] != 'r' || r.path == "[vvar]" || r.path == "[vvar_vclock]" || r.path == "[vsyscall]")
            continue;
        auto x = read_memory(a, r), y = read_memory(b, r);
        report.regions++;
        report.bytes += x.size();
        if (x == y)
            continue;
        for (size_t i = 0; i < x.size(); i++) {
            if (x[i] == y[i])
                continue;
            uint64_t addr = r.start + i;
            bool ok = false;
            for (const auto& [lo, hi] : allowed)
                ok = ok || (addr >= lo && addr < hi);
            char buf[128];
            std::snprintf(buf, sizeof buf, "byte at %" PRIx64 " (%s) differs: %02x vs %02x", addr, r.path.c_str(),
                          x[i] & 0xff, y[i] & 0xff);
            check(ok, buf);
            report.rseq_bytes++;
        }
    }
    return report;
}

void poke_int(pid_t tid, uint64_t addr, int value)
{
    errno = 0;
    long word = ptrace(PTRACE_PEEKDATA, tid, addr, nullptr);
    check(errno == 0, "PTRACE_PEEKDATA: " + std::string(std::strerror(errno)));
    std::memcpy(&word, &value, sizeof value);
    check(ptrace(PTRACE_POKEDATA, tid, addr, word) == 0, "PTRACE_POKEDATA: " + std::string(std::strerror(errno)));
}

// Resumes every traced thread and follows them until all have exited;
// returns the exit status of each.
std::map<pid_t, int> run_to_exit(std::set<pid_t> tids)
{
    std::map<pid_t, int> exits;
    for (pid_t t : tids)
        check(ptrace(PTRACE_CONT, t, nullptr, nullptr) == 0, "PTRACE_CONT: " + std::string(std::strerror(errno)));
    while (!tids.empty()) {
        int status = 0;
        pid_t w = waitpid(-1, &status, __WALL);
        check(w > 0, "waitpid: " + std::string(std::strerror(errno)));
        if (!tids.count(w))
            continue;
        if (WIFEXITED(status) || WIFSIGNALED(status)) {
            check(!WIFSIGNALED(status),
                  "thread " + std::to_string(w) + " was killed by " + strsignal(WTERMSIG(status)));
            tids.erase(w);
            exits[w] = WEXITSTATUS(status);
        } else if (WIFSTOPPED(status)) {
            int sig = (status >> 16) != 0 ? 0 : WSTOPSIG(status);
            ptrace(PTRACE_CONT, w, nullptr, sig);
        }
    }
    return exits;
}

int run(const std::string& program, int threads, int megabytes, const fs::path& work)
{
    if (geteuid() != 0)
        skip("CRIU needs root");
    std::string criu = find_criu();
    if (criu.empty())
        skip("CRIU is not installed (scripts/install-criu.sh)");
    std::string version = criu_version(criu);
    if (!version_at_least(version, 4, 1))
        skip(criu + " is CRIU " + version + "; landmarks need 4.1 or later (scripts/install-criu.sh)");
    ProgramOutput criu_check = run_program({criu, "check"});
    if (criu_check.status != 0)
        skip("`" + criu + " check` fails here:\n" + criu_check.output);
    std::printf("criu: %s %s\n", criu.c_str(), version.c_str());

    fs::remove_all(work);
    fs::create_directories(work);
    int out[2];
    check(pipe2(out, O_CLOEXEC) == 0, "pipe");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, out[1], 2);
    // Whatever runs the check (a CI runner's sockets, say) stays out of the image.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    std::string prog = program, t = std::to_string(threads), mb = std::to_string(megabytes);
    std::vector<char*> argv = {prog.data(), t.data(), mb.data(), nullptr};
    // A session of its own: in a container, the session leader is often
    // outside the pid namespace, and CRIU refuses such a process.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
    pid_t pid = 0;
    int err = posix_spawn(&pid, program.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    check(err == 0, "posix_spawn " + program + ": " + std::strerror(err));

    std::string go_line = read_line(out[0]);
    uint64_t go = 0;
    check(std::sscanf(go_line.c_str(), "go %" SCNx64, &go) == 1, "unexpected first line: " + go_line);
    std::vector<pid_t> tids = seize_clean(pid);
    check(static_cast<int>(tids.size()) == threads, "the program has " + std::to_string(tids.size()) + " threads");

    std::vector<user_regs_struct> regs;
    std::vector<user_fpregs_struct> fpregs;
    std::vector<std::pair<uint64_t, uint64_t>> rseq;
    for (pid_t tid : tids) {
        regs.push_back(regs_of(tid));
        fpregs.push_back(fpregs_of(tid));
        RseqConfiguration conf{};
        if (ptrace(static_cast<__ptrace_request>(PTRACE_GET_RSEQ_CONFIGURATION), tid, sizeof conf, &conf) > 0 &&
            conf.rseq_abi_pointer)
            rseq.emplace_back(conf.rseq_abi_pointer,
                              conf.rseq_abi_pointer + std::max<uint32_t>(conf.rseq_abi_size, 32));
    }

    // The original's memory before the dump, to check the dump leaves it alone.
    fs::path images = work / "image";
    LandmarkImage image = dump_landmark(criu, pid, tids, images, kOptions);
    std::printf("dump: %.3f s (stop %.3f s, criu dump %.3f s, seize %.3f s), image %.1f MB\n",
                seconds(image.stop_time + image.criu_time + image.seize_time), seconds(image.stop_time),
                seconds(image.criu_time), seconds(image.seize_time), image.bytes / 1048576.0);
    for (size_t i = 0; i < tids.size(); i++) {
        check(static_cast<long long>(regs_of(tids[i]).orig_rax) == -1, "orig_rax after the dump");
        auto f = fpregs_of(tids[i]);
        check(std::memcmp(&f, &fpregs[i], sizeof f) == 0, "the original's FP registers changed across the dump");
    }

    int copy_out[2];
    check(pipe2(copy_out, O_CLOEXEC) == 0, "pipe");
    auto t0 = Clock::now();
    RestoredLandmark copy = RestoredLandmark::restore(criu, images, {{1, copy_out[1]}}, kOptions);
    auto restore_time = Clock::now() - t0;
    close(copy_out[1]);
    std::printf("restore: %.3f s (criu restore %.3f s); copy pid %d (%d in its namespace), holder %d\n",
                seconds(restore_time), seconds(copy.criu_time()), copy.pid(), copy.threads().front().inner_tid,
                copy.holder());
    check(copy.threads().size() == tids.size(), "the copy has " + std::to_string(copy.threads().size()) + " threads");
    for (size_t i = 0; i < tids.size(); i++) {
        const auto& c = copy.threads()[i];
        check(c.inner_tid == tids[i], "thread " + std::to_string(i) + " of the copy has tid " +
                                          std::to_string(c.inner_tid) + " in its namespace, not " +
                                          std::to_string(tids[i]));
        auto r = regs_of(c.tid);
        auto f = fpregs_of(c.tid);
        check(std::memcmp(&r, &regs[i], sizeof r) == 0,
              "thread " + std::to_string(tids[i]) + ": the copy's registers differ (rip " + std::to_string(r.rip) +
                  " vs " + std::to_string(regs[i].rip) + ")");
        check(std::memcmp(&f, &fpregs[i], sizeof f) == 0,
              "thread " + std::to_string(tids[i]) + ": the copy's FP registers differ");
    }
    std::printf("registers: equal in %zu threads (general and FP)\n", tids.size());
    MemoryReport mem = compare_memory(pid, copy.pid(), rseq);
    std::printf("memory: %zu regions, %.1f MB equal", mem.regions, mem.bytes / 1048576.0);
    std::printf(mem.rseq_bytes ? " except %" PRIu64 " bytes in rseq areas (cpu ids)\n" : "\n", mem.rseq_bytes);

    // Both run to completion; they must print the same.
    poke_int(pid, go, 1);
    poke_int(copy.pid(), go, 1);
    std::set<pid_t> all(tids.begin(), tids.end());
    for (const auto& c : copy.threads())
        all.insert(c.tid);
    auto exits = run_to_exit(all);
    check(exits[pid] == 0, "the original exited with status " + std::to_string(exits[pid]));
    std::string original_output = read_all(out[0]), copy_output = read_all(copy_out[0]);
    int copy_status = copy.wait_holder();
    check(original_output.find("main ") != std::string::npos, "the original printed: " + original_output);
    check(original_output == copy_output,
          "outputs differ:\n--- original\n" + original_output + "--- copy\n" + copy_output);
    check(copy_status == 0, "the copy's exit status is " + std::to_string(copy_status));
    std::printf("outputs: equal (%zu lines), both exited 0\n",
                static_cast<size_t>(std::count(copy_output.begin(), copy_output.end(), '\n')));
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s PROGRAM THREADS MEGABYTES WORKDIR\n", argv[0]);
        return 2;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    alarm(300); // never hang a test run
    try {
        int status = run(argv[1], std::atoi(argv[2]), std::atoi(argv[3]), argv[4]);
        if (status == 0)
            std::printf("ok\n");
        return status;
    } catch (const std::exception& e) {
        std::printf("FAIL: %s\n", e.what());
        return 1;
    }
}
