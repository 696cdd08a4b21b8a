// A forked child stopped under ptrace at its first stop, killed at the end.
// It shares this process's image (the same addresses for data and code);
// continued, it runs `then`, and exits.
#pragma once

#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <functional>

struct StoppedChild {
    pid_t pid = -1;
    explicit StoppedChild(const std::function<void()>& then = {})
    {
        pid = ::fork();
        if (pid == 0) {
            ::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr);
            ::raise(SIGSTOP);
            if (then)
                then();
            ::_exit(0);
        }
        ::waitpid(pid, nullptr, 0);
    }
    StoppedChild(const StoppedChild&) = delete;
    StoppedChild& operator=(const StoppedChild&) = delete;
    // Continues the child up to its next stop (a SIGSTOP `then` raises).
    void run_to_next_stop() const
    {
        ::ptrace(PTRACE_CONT, pid, nullptr, nullptr);
        ::waitpid(pid, nullptr, 0);
    }
    ~StoppedChild()
    {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};
