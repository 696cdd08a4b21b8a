// Persistent landmarks: a stopped, ptrace-seized process saved to a directory
// with CRIU, and copies of it restored from there.
//
// Contract (see docs/landmarks.md):
// - dump_landmark: the caller has PTRACE_SEIZEd every thread of the process
//   and each is in a ptrace-stop outside any system call (orig_rax == -1: a
//   breakpoint's SIGTRAP, a PTRACE_INTERRUPT while in user code, a single
//   step). The threads are detached into a job-control stop, CRIU dumps the
//   process, and the threads are seized again. On return (also when the dump
//   failed) each thread is seized with the given options and stopped in a
//   group-stop whose PTRACE_EVENT_STOP has been consumed; PTRACE_CONT and
//   PTRACE_SINGLESTEP resume it. Registers and memory are unchanged (checked
//   for the registers).
// - RestoredLandmark::restore: a copy of the process in a new pid and mount
//   namespace, so the recorded pids are free there. A holder process is
//   the namespace's init (and so the subreaper of the copy) and reaps it.
//   Every thread of the copy is seized and stopped as above. Destroying the
//   RestoredLandmark kills the copy and its namespace.
// Errors are std::runtime_error with what CRIU printed (its log's last lines).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rw::replay {

// The CRIU binary rewind uses: $REWIND_CRIU if set, else the private
// install of scripts/install-criu.sh (kCriuPrivatePath), else `criu` on PATH.
// Empty when there is none.
inline constexpr const char* kCriuPrivatePath = "/opt/rewind/criu/bin/criu";
std::string find_criu();

// "4.1.1" from `criu --version`, or "" when it does not run.
std::string criu_version(const std::string& criu);

// Whether a version string is at least major.minor.
bool version_at_least(const std::string& version, int major, int minor);

// Result of running a program: its exit status (as waitpid) and what it wrote
// to stdout and stderr together.
struct ProgramOutput {
    int status = -1;
    std::string output;
};

// Runs argv[0] (a path) and collects its output. `env` (NAME=value) is
// added to this process's environment. After `timeout` the program is
// killed and the status says so (SIGKILL). With `mount_ns` (an open
// /proc/PID/ns/mnt), the program runs in that mount namespace; with
// `pid_ns` (an open /proc/PID/ns/pid) too, in that pid namespace.
ProgramOutput run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                          std::chrono::seconds timeout = std::chrono::seconds(120), int mount_ns = -1, int pid_ns = -1);

// The environment every criu run gets: CRIU_FAULT=130 (FI_NO_BREAKPOINTS)
// makes criu stop its parasite's sigreturn with PTRACE_SYSCALL instead of a
// hardware breakpoint, which never fires where the debug registers do not
// work (some virtual machines) and leaves criu waiting forever.
std::vector<std::string> criu_environment();

struct LandmarkImage {
    std::filesystem::path dir;
    pid_t pid = 0;                              // the dumped process (the pid the copies get in their namespace)
    std::vector<pid_t> tids;                    // its threads, main thread first
    std::map<int, std::string> fds;             // descriptor -> what it was (readlink of /proc/PID/fd/N)
    uint64_t bytes = 0;                         // size of the image files
    std::chrono::duration<double> stop_time{};  // detaching into a job-control stop
    std::chrono::duration<double> criu_time{};  // criu dump
    std::chrono::duration<double> seize_time{}; // seizing again
};

// Dumps `pid`, whose threads `tids` the caller has seized and stopped at a
// clean stop, into `dir` (created; must not hold another image). Threads are
// seized again with `ptrace_options` (PTRACE_O_*). Throws on failure, after
// seizing the threads again if they were detached. CRIU runs in the mount
// namespace of `pid`: the files it maps are recorded by their paths there
// (a replayed process sees the trace's copies at the original paths).
LandmarkImage dump_landmark(const std::string& criu, pid_t pid, const std::vector<pid_t>& tids,
                            const std::filesystem::path& dir, unsigned long ptrace_options);

// Dumps single-threaded process `pid`, which the caller has left untraced
// and asleep in a call without effect (pause): never stopped by a signal,
// so its parent hears nothing of it (a job-control stop would send it
// SIGCHLD). CRIU ends the process after the dump. Throws on failure (the
// process is left as it was).
LandmarkImage dump_parked_copy(const std::string& criu, pid_t pid, const std::filesystem::path& dir);

// Reads the description that dump_landmark left in an image directory.
LandmarkImage read_landmark(const std::filesystem::path& dir);

class RestoredLandmark {
public:
    struct Thread {
        pid_t tid;       // in this process's pid namespace (use it with ptrace)
        pid_t inner_tid; // in the copy's namespace: the dumped thread's tid
    };

    // Restores the image in `dir`. `inherit` maps a descriptor of the copy to
    // a descriptor of the caller that replaces it (a pipe or socket the dumped
    // process had, whose other end stays with the original, usually stdio).
    // `prepare`, if given, is called with the holder's pid once its mount
    // namespace exists and before criu runs there (to mount what the copy's
    // files need); what it returns, if not empty, is the error.
    using Prepare = std::function<std::string(pid_t holder)>;
    static RestoredLandmark restore(const std::string& criu, const std::filesystem::path& dir,
                                    const std::map<int, int>& inherit, unsigned long ptrace_options,
                                    const Prepare& prepare = {});

    RestoredLandmark(RestoredLandmark&& other) noexcept;
    RestoredLandmark& operator=(RestoredLandmark&& other) noexcept;
    RestoredLandmark(const RestoredLandmark&) = delete;
    RestoredLandmark& operator=(const RestoredLandmark&) = delete;
    ~RestoredLandmark();

    pid_t pid() const { return threads_.empty() ? 0 : threads_.front().tid; }
    const std::vector<Thread>& threads() const { return threads_; }
    pid_t holder() const { return holder_; }
    std::chrono::duration<double> criu_time() const { return criu_time_; }

    // Waits for the holder, once the copy has exited, and returns the
    // copy's exit status (as waitpid). Traced threads' exits the caller has
    // not collected are collected here.
    int wait_holder();

    // Kills the copy and its namespace (the destructor does it too).
    void kill();

private:
    // Forgets the copy's threads and closes the holder's status pipe.
    void let_go();
    RestoredLandmark() = default;
    // Collects traced exits in the namespace until the holder has ended;
    // false if it has not within `limit`.
    bool reap_until_holder_ends(std::chrono::seconds limit);
    pid_t holder_ = 0;
    int status_fd_ = -1; // the holder writes the copy's exit status there
    std::vector<Thread> threads_;
    std::chrono::duration<double> criu_time_{};
};

} // namespace rw::replay
