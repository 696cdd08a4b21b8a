// The sizes the supervisor reads from the kernel for a stalled call: a
// semaphore set's, also where the recorded process has an IPC namespace of
// its own (a container), whose sets the recorder's namespace does not list.
#include <doctest/doctest.h>
#include <sched.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kernel_state.h"
#include "rewind_abi.h"

using namespace rw;

namespace {

// A child in a new IPC namespace holding a set of `nsems` semaphores, until
// it is killed. Its set's id, or -1 with why (not root: the test is skipped).
struct ChildWithSemaphores {
    pid_t pid = -1;
    int semid = -1;
    int error = 0;
    explicit ChildWithSemaphores(int nsems)
    {
        int to_parent[2];
        REQUIRE(::pipe(to_parent) == 0);
        pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int answer[2] = {-1, 0};
            if (::unshare(CLONE_NEWIPC) != 0 || (answer[0] = ::semget(IPC_PRIVATE, nsems, 0600)) < 0)
                answer[1] = errno;
            (void)!::write(to_parent[1], answer, sizeof answer);
            ::pause();
            ::_exit(0);
        }
        ::close(to_parent[1]);
        int answer[2] = {-1, EIO};
        (void)!::read(to_parent[0], answer, sizeof answer);
        ::close(to_parent[0]);
        semid = answer[0];
        error = answer[1];
    }
    ChildWithSemaphores(const ChildWithSemaphores&) = delete;
    ChildWithSemaphores& operator=(const ChildWithSemaphores&) = delete;
    ~ChildWithSemaphores()
    {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
    }
};

} // namespace

TEST_CASE("a semaphore set in another IPC namespace is sized as that namespace lists it")
{
    ChildWithSemaphores child(5);
    if (child.semid < 0) {
        MESSAGE("skipped: a new IPC namespace and a set in it: " << std::strerror(child.error));
        return;
    }
    CHECK(read_state_size(child.pid, RW_STATE_SEM_NSEMS, uint64_t(child.semid)) == 10u);
    CHECK_FALSE(read_state_size(child.pid, RW_STATE_SEM_NSEMS, uint64_t(child.semid) + 1));

    // A set of the recorder's own namespace, for a thread of it.
    int mine = ::semget(IPC_PRIVATE, 3, 0600);
    REQUIRE(mine >= 0);
    CHECK(read_state_size(::getpid(), RW_STATE_SEM_NSEMS, uint64_t(mine)) == 6u);
    ::semctl(mine, 0, IPC_RMID);
    CHECK_FALSE(read_state_size(::getpid(), RW_STATE_SEM_NSEMS, uint64_t(mine)));
}
