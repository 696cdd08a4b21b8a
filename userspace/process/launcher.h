// Starts a program to record or replay: a child that prepares itself, then
// waits before its execve until the tracer has attached.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "signal_state.h"

namespace rw {

class Launcher {
public:
    // `prepare` runs in the child, before it waits; it returns an empty
    // string, or what went wrong (then the child exits and release() says so).
    using Prepare = std::function<std::string()>;
    // The program starts with `signals` (blocked and ignored signals).
    Launcher(std::string path, std::vector<std::string> argv, std::vector<std::string> envp, SignalState signals,
             Prepare prepare);
    ~Launcher();
    Launcher(const Launcher&) = delete;
    Launcher& operator=(const Launcher&) = delete;

    pid_t pid() const { return pid_; }
    // Lets the child execve. Returns an empty string on success, else why it failed.
    std::string release();

private:
    pid_t pid_ = -1;
    int go_fd_ = -1;
    int error_fd_ = -1;
};

// What both recording and replay need: the same address layout every run
// (no randomisation) and rdtsc/rdtscp faulting so their values go through rewind.
std::string disable_aslr_and_trap_tsc();
// Recording also installs the recording filter (recording_filter.h).
std::string prepare_for_recording();

// PATH lookup as execvp does it; empty if not found or not executable.
std::string find_program(const std::string& name);

// Pointers into v's strings, ending with a null, for exec (v must outlive them).
std::vector<char*> c_strings(std::vector<std::string>& v);

} // namespace rw
