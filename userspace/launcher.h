// Starts the program to record: a child prepared for deterministic replay
// (no address randomisation, rdtsc trapping, rseq refused), held before its
// execve until the supervisor has attached and the capture follows it.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace rw {

class Launcher {
public:
    Launcher(std::string path, std::vector<std::string> argv, std::vector<std::string> envp);
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    pid_t pid() const { return pid_; }
    // Lets the child execve. Returns an empty string on success, else why it failed.
    std::string release();

    // How the child departs from a plain run (recorded in meta.json).
    const std::vector<std::string>& notes() const { return notes_; }

private:
    pid_t pid_ = -1;
    int go_fd_ = -1;
    int error_fd_ = -1;
    std::vector<std::string> notes_;
};

// PATH lookup as execvp does it; empty if not found or not executable.
std::string find_program(const std::string& name);

} // namespace rw
