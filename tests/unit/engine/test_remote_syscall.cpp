// Syscalls the replayer injects into a stopped tracee.
#include <doctest/doctest.h>

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <thread>

#include "remote_syscall.h"
#include "stop_waiter.h"
#include "stopped_child.h"
#include "task.h"

using namespace rw;
using namespace rw::replay;

TEST_CASE("an injected syscall a signal interrupts runs again, the caller's own stop passed over")
{
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    StoppedChild child([] { ::syscall(SYS_getppid); });
    REQUIRE(::ptrace(PTRACE_SETOPTIONS, child.pid, nullptr, PTRACE_O_TRACESYSGOOD) == 0);
    // To the entry of its getppid.
    REQUIRE(::ptrace(PTRACE_SYSCALL, child.pid, nullptr, nullptr) == 0);
    int status = 0;
    REQUIRE(::waitpid(child.pid, &status, 0) == child.pid);
    REQUIRE((WIFSTOPPED(status) && WSTOPSIG(status) == (SIGTRAP | 0x80)));

    StopWaiter waiter;
    auto group = std::make_shared<ThreadGroup>();
    group->tgid = child.pid;
    Task task(child.pid, child.pid, group, std::make_shared<AddressSpace>());
    task.at = Task::At::SyscallEntry;
    // While the injected read waits on the empty pipe: a signal (it ends the
    // wait with ERESTARTSYS), then a byte to read.
    std::thread poke([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::syscall(SYS_tgkill, child.pid, child.pid, SIGUSR1);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        REQUIRE(::write(pipe_fds[1], "x", 1) == 1);
    });
    int own_stops = 0;
    int64_t got;
    {
        RemoteSyscalls remote(task, waiter, [&](const StopInfo& s) {
            if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGUSR1)
                return false;
            own_stops++;
            return true;
        });
        uint64_t buffer = remote.push_string("........");
        got = remote.call(SYS_read, static_cast<uint64_t>(pipe_fds[0]), buffer, 1);
        remote.finish(0);
    }
    poke.join();
    CHECK(got == 1);
    CHECK(own_stops == 1);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
}
