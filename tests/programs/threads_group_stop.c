/* A thread stops its whole process (SIGSTOP) while the main thread waits
 * to join it; the parent sees the stop, continues the child (SIGCONT) and
 * waits for its end. Three rounds. The main thread, stopped with the group
 * and continued, is told so by the kernel (a seized thread gets a notice
 * when SIGCONT ends its group's stop): nothing the program sees. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 3

static void *stops_the_process(void *arg)
{
    (void)arg;
    sched_yield();
    sched_yield();
    kill(getpid(), SIGSTOP);
    return NULL;
}

int main(void)
{
    for (int round = 0; round < ROUNDS; round++) {
        pid_t child = fork();
        if (child == 0) {
            pthread_t thread;
            pthread_create(&thread, NULL, stops_the_process, NULL);
            pthread_join(thread, NULL);
            _exit(round + 10);
        }
        int status = 0;
        pid_t got = waitpid(child, &status, WUNTRACED);
        int stopped = got == child && WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP;
        kill(child, SIGCONT);
        got = waitpid(child, &status, 0);
        printf("round %d: stopped by SIGSTOP: %s; then exited with %d\n", round, stopped ? "yes" : "no",
               got == child && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return 0;
}
