/* A child that stops itself with SIGSTOP, then is killed by its parent
 * while it is stopped: replay, which serves the parent's kill() from the
 * log, must end the stopped child itself. */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    pid_t child = fork();
    if (child == 0) {
        kill(getpid(), SIGSTOP);
        return 77; /* never: it is killed while stopped */
    }
    int status;
    waitpid(child, &status, WUNTRACED);
    int stopped_by = WIFSTOPPED(status) ? WSTOPSIG(status) : 0;
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    printf("child stopped by signal %d, then killed by signal %d\n", stopped_by,
           WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
