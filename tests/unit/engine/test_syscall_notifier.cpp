#include <doctest/doctest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <array>
#include <cstring>
#include <vector>

#include "syscall_notifier.h"

using rw::UniqueFd;
using rw::replay::SyscallNotification;
using rw::replay::SyscallNotifier;

TEST_CASE("the replay's seccomp filter notifies the syscalls replay serves, not those it runs for real")
{
    std::array<uint64_t, 6> none{}, set_mask{0, 0x7ffc0100, 0, 8, 0, 0};
    CHECK(SyscallNotifier::notifies(SYS_write, none));
    CHECK(SyscallNotifier::notifies(SYS_getppid, none));
    CHECK(SyscallNotifier::notifies(SYS_openat, none));
    CHECK(SyscallNotifier::notifies(999, none)); // not in the table: never run unseen
    CHECK_FALSE(SyscallNotifier::notifies(SYS_mmap, none));
    CHECK(SyscallNotifier::notifies(SYS_rt_sigprocmask, none)); // reads the mask: served
    CHECK_FALSE(SyscallNotifier::notifies(SYS_rt_sigprocmask, set_mask));
    CHECK_FALSE(SyscallNotifier::notifies(SYS_exit_group, none));
    CHECK_FALSE(SyscallNotifier::notifies(SYS_execve, none));
}

TEST_CASE("a process under the filter: served calls are answered by the listener, the others run")
{
    int info[2], go[2];
    REQUIRE(pipe(info) == 0);
    REQUIRE(pipe(go) == 0);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // Raw syscalls only from here on: each is a notification or not.
        std::vector<struct sock_filter> program = SyscallNotifier::filter_program(0x5eed);
        struct sock_fprog prog = {static_cast<unsigned short>(program.size()), program.data()};
        prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog) < 0)
            syscall(SYS_exit_group, 10);
        char byte;
        syscall(SYS_read, go[0], &byte, 1); // notified: let run
        long parent = syscall(SYS_getppid); // notified: answered from "the log"
        void* page = reinterpret_cast<void*>(
            syscall(SYS_mmap, nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)); // runs
        uint64_t mask = 0, block = 1ull << (SIGUSR1 - 1);
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, nullptr, &mask, 8);  // only reads: notified
        syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, nullptr, 8); // sets: runs
        long skipped = syscall(-1);                                 // runs: nothing, ENOSYS
        long results[3] = {parent, page == MAP_FAILED ? 0 : 1, skipped == -1 && errno == ENOSYS ? 1 : 0};
        syscall(SYS_write, info[1], results, sizeof results); // notified: let run
        syscall(SYS_exit_group, 0);
    }
    struct Reaper {
        pid_t pid;
        bool reaped = false;
        ~Reaper()
        {
            if (!reaped) {
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
            }
        }
    } reaper{child};
    // The listener, from the child's descriptor table once it is there.
    UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, child, 0)));
    REQUIRE(pidfd);
    int listener = -1;
    for (int tries = 0; tries < 2000 && listener < 0; tries++, usleep(1000))
        for (int fd = 3; fd < 64 && listener < 0; fd++) {
            int got = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0));
            if (got < 0)
                continue;
            char link[64], target[128] = {};
            snprintf(link, sizeof link, "/proc/self/fd/%d", got);
            if (readlink(link, target, sizeof target - 1) > 0 && std::strstr(target, "seccomp"))
                listener = got;
            else
                close(got);
        }
    REQUIRE(listener >= 0);
    SyscallNotifier notifier(UniqueFd(listener), 0x5eed);
    std::vector<int> seen;
    auto next = [&]() {
        auto call = notifier.receive();
        REQUIRE(call);
        CHECK(call->tid == child);
        CHECK(call->native);
        seen.push_back(call->nr);
        return *call;
    };
    REQUIRE(write(go[1], "g", 1) == 1);
    notifier.let_run(next().id); // read
    SyscallNotification getppid = next();
    CHECK(notifier.answer(getppid.id, 4242));
    notifier.let_run(next().id); // rt_sigprocmask reading the mask
    notifier.let_run(next().id); // write of the results
    long results[3] = {};
    REQUIRE(read(info[0], results, sizeof results) == sizeof results);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    reaper.reaped = true;
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(seen == std::vector<int>{SYS_read, SYS_getppid, SYS_rt_sigprocmask, SYS_write});
    CHECK(results[0] == 4242); // served, not run
    CHECK(results[1] == 1);    // mmap ran for real
    CHECK(results[2] == 1);    // -1: nothing run, nothing notified
    close(info[0]);
    close(info[1]);
    close(go[0]);
    close(go[1]);
}
