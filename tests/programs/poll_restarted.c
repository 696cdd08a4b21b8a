/* A poll with a timeout that a job-control stop interrupts: no handler
 * runs, so the kernel continues it with restart_syscall, which writes
 * poll's revents. The revents must be the recording's in replay. */
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&t, NULL);
}

int main(void)
{
    int fds[2];
    if (pipe(fds))
        return 1;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        pause_ms(100);
        kill(parent, SIGSTOP); /* the parent is inside poll */
        pause_ms(50);
        kill(parent, SIGCONT);
        pause_ms(100);
        write(fds[1], "x", 1);
        _exit(0);
    }
    struct pollfd p = {fds[0], POLLIN, 0};
    int n = poll(&p, 1, 5000);
    printf("poll %d revents %#x\n", n, p.revents);
    waitpid(child, NULL, 0);
    return 0;
}
