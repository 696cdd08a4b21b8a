/* A stopped child continued and stopped again at once (SIGCONT then
 * SIGSTOP back to back), fifty times, while it reads and yields: the
 * second stop signal discards the SIGCONT before the child takes it, so
 * the child's next delivery after a stop is a stop again. Both processes
 * share one CPU so that the child rarely runs between the two kills. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one);
    pid_t child = fork();
    if (child == 0) {
        int fd = open("/dev/zero", O_RDONLY);
        char c;
        for (int i = 0; i < 4000; i++) {
            if (read(fd, &c, 1) != 1)
                return 1;
            sched_yield();
        }
        return 77;
    }
    int stops = 0, status;
    for (int round = 0; round < 50; round++) {
        kill(child, SIGSTOP);
        if (waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status))
            stops++;
        kill(child, SIGCONT);
        kill(child, SIGSTOP);
        if (waitpid(child, &status, WUNTRACED) == child && WIFSTOPPED(status))
            stops++;
        kill(child, SIGCONT);
    }
    waitpid(child, &status, 0);
    printf("%d stops seen; the child exited with %d\n", stops, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
