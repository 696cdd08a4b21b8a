/* fork, exec a child program, wait for it. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execlp("echo", "echo", "hello from the child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child exited with %d\n", WEXITSTATUS(status));
    return 0;
}
