/* A child created with CLONE_UNTRACED, which no tracer may follow (the
 * recorder follows it in the kernel; replay must create it all the same):
 * it writes a line into a pipe, and the parent prints what it read and how
 * the child ended. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int pipe_fds[2];

static int child_main(void* arg)
{
    const char* text = arg;
    int n = 0;
    while (text[n])
        n++;
    return write(pipe_fds[1], text, (size_t)n) == n ? 7 : 1;
}

int main(void)
{
    static char stack[64 * 1024];
    if (pipe(pipe_fds) != 0)
        return 1;
    pid_t child = clone(child_main, stack + sizeof stack, CLONE_UNTRACED | SIGCHLD, "from the untraced child\n");
    if (child < 0) {
        perror("clone");
        return 1;
    }
    char line[64] = {0};
    ssize_t got = read(pipe_fds[0], line, sizeof line - 1);
    int status = 0;
    waitpid(child, &status, 0);
    printf("read %zd bytes: %s", got, line);
    printf("child exited with %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}
