/* Threads in a PID namespace of the program's own: the first process in
 * it (pid 1 there) starts threads and joins them, and a child it forks
 * does the same. The kernel stores each thread's id where pthread keeps
 * it, as the namespace numbers it (2, 3…, not the machine's numbers), and
 * pthread_join waits on that word. Needs the right to make a namespace. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *report(void *arg)
{
    (void)arg;
    return (void *)(long)syscall(SYS_gettid);
}

static void threads(const char *who)
{
    for (int i = 0; i < 3; i++) {
        pthread_t thread;
        void *tid = NULL;
        if (pthread_create(&thread, NULL, report, NULL) != 0 || pthread_join(thread, &tid) != 0) {
            fprintf(stderr, "%s: thread %d failed\n", who, i);
            exit(1);
        }
        printf("%s (pid %d): thread %d had id %ld\n", who, (int)getpid(), i, (long)tid);
        fflush(stdout);
    }
}

int main(void)
{
    if (unshare(CLONE_NEWPID) != 0) {
        perror("unshare(CLONE_NEWPID)");
        return 1;
    }
    pid_t init = fork();
    if (init == 0) {
        threads("init");
        pid_t child = fork();
        if (child == 0) {
            threads("child");
            _exit(0);
        }
        int status;
        waitpid(child, &status, 0);
        printf("init: child %d exited with %d\n", (int)child, WEXITSTATUS(status));
        fflush(stdout);
        _exit(0);
    }
    int status;
    waitpid(init, &status, 0);
    printf("the namespace's init exited with %d\n", WEXITSTATUS(status));
    return 0;
}
