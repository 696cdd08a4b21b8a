#include "launch_detach.h"

#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <map>
#include <system_error>

#include "process_image.h"
#include "thread_injector.h"
#include "tracee.h"
#include "unique_fd.h"
#include "vdso.h"

namespace rw {
namespace {

// The kernel maps one vDSO image into every process: rewind's own copy is
// the unpatched original.
std::vector<uint8_t> kernel_vdso()
{
    for (const auto& m : read_mappings(getpid()))
        if (m.path == "[vdso]") {
            const auto* start = reinterpret_cast<const uint8_t*>(m.start);
            return std::vector<uint8_t>(start, start + (m.end - m.start));
        }
    return {};
}

} // namespace

std::vector<std::string> undo_launch(const std::vector<pid_t>& tids)
{
    std::vector<std::string> problems;
    // Unless rewind itself runs without randomization (setarch -R), which
    // its programs would inherit anyway.
    int own_persona = personality(0xffffffff);
    bool clear_no_randomize = own_persona >= 0 && !(own_persona & ADDR_NO_RANDOMIZE);
    std::map<pid_t, std::vector<pid_t>> processes; // tgid -> its stopped threads
    // Injected calls first, while every vDSO still holds the syscall
    // instructions they may run.
    for (pid_t tid : tids) {
        try {
            auto tgid = static_cast<pid_t>(proc_status_number(tid, "Tgid").value_or(tid));
            std::vector<pid_t>& threads = processes[tgid];
            threads.push_back(tid);
            ThreadInjector in(tid, find_syscall_instruction(tgid));
            in.call(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE);
            if (threads.size() == 1 && clear_no_randomize) {
                int64_t persona = in.call(SYS_personality, 0xffffffff);
                if (persona >= 0 && (persona & ADDR_NO_RANDOMIZE))
                    in.call(SYS_personality, static_cast<uint64_t>(persona & ~ADDR_NO_RANDOMIZE));
            }
            // Held back while the calls ran: pending again, delivered once
            // the thread is let go.
            for (int sig : in.arrived())
                ::syscall(SYS_tgkill, tgid, tid, sig);
        } catch (const std::exception& e) {
            problems.push_back("thread " + std::to_string(tid) + ": " + e.what());
        }
    }
    std::vector<uint8_t> vdso = kernel_vdso();
    for (const auto& [tgid, threads] : processes)
        for (auto& p : put_back_vdso(tgid, threads, vdso))
            problems.push_back(std::move(p));
    return problems;
}

int wait_for_program(pid_t pid)
{
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGTERM, SIGHUP})
        sigaddset(&mask, s);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    UniqueFd sigfd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    if (sigfd.get() < 0)
        throw std::system_error(errno, std::generic_category(), "waiting for the program");
    for (;;) {
        int status = 0;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        if (r < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "waiting for the program");
        struct pollfd p = {sigfd.get(), POLLIN, 0};
        // (A SIGCHLD of its end wakes the poll; the timeout is a way out
        // should one be missed.)
        ::poll(&p, 1, 1000);
        struct signalfd_siginfo si;
        // Not one sent to rewind's process group, which the program is in:
        // that reached it already.
        while (::read(sigfd.get(), &si, sizeof(si)) == sizeof(si))
            if (si.ssi_signo != SIGCHLD && getpgid(static_cast<pid_t>(si.ssi_pid)) != getpgrp())
                ::kill(pid, static_cast<int>(si.ssi_signo));
    }
}

} // namespace rw
