/* A process killed (SIGKILL, from its parent) just after it created a
 * thread that has not run yet: the recording's kernel still reports the new
 * thread's return from clone, after its process is gone. The child keeps
 * the CPU in a loop that makes progress, so under rewind's scheduler the
 * new thread cannot run before the kill; natively, on a second core, it
 * may, so its syscall counts vary from run to run. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void* idle(void* arg)
{
    (void)arg;
    pause();
    return NULL;
}

int main(void)
{
    int fds[2];
    pipe(fds);
    pid_t child = fork();
    if (child == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, idle, NULL);
        write(fds[1], "x", 1);
        for (volatile unsigned long n = 0;; n++)
            ;
    }
    char c;
    read(fds[0], &c, 1);
    kill(child, SIGKILL);
    int status;
    waitpid(child, &status, 0);
    printf("child killed by signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
