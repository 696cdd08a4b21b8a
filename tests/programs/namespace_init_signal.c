/* The init of a new PID namespace sends itself SIGTERM, which it has no
 * handler for: the kernel drops it (an init only dies of SIGKILL), and the
 * init exits with its own status. A replay, whose process is no namespace
 * init, must not be given the signal. Needs CAP_SYS_ADMIN (exit 77). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    if (unshare(CLONE_NEWPID) != 0) {
        printf("cannot make a PID namespace: %s\n", strerror(errno));
        return 77;
    }
    pid_t init = fork();
    if (init == 0) {
        kill(getpid(), SIGTERM);
        kill(getpid(), SIGUSR1);
        return getpid() == 1 ? 55 : 1;
    }
    int status;
    waitpid(init, &status, 0);
    if (WIFEXITED(status))
        printf("the namespace's init exited with status %d\n", WEXITSTATUS(status));
    else
        printf("the namespace's init was killed by signal %d\n", WTERMSIG(status));
    return 0;
}
