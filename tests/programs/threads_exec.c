/* The main thread execs while its other threads wait: one in read() on a
 * pipe nobody writes, one in a condition variable's futex, one sleeping.
 * The exec ends them where they stand, inside calls that never return, and
 * the new image starts with one thread. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static int fds[2], waiting;

static void* in_read(void* arg)
{
    (void)arg;
    char c;
    read(fds[0], &c, 1);
    return NULL;
}

static void* in_cond(void* arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    waiting = 1;
    for (;;)
        pthread_cond_wait(&never, &lock);
    return NULL;
}

static void* in_sleep(void* arg)
{
    (void)arg;
    struct timespec long_time = {1000, 0};
    nanosleep(&long_time, NULL);
    return NULL;
}

static int threads_now(void)
{
    FILE* f = fopen("/proc/self/status", "r");
    char line[256];
    int n = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

int main(int argc, char** argv)
{
    if (argc > 1) {
        printf("new image: %d thread(s)\n", threads_now());
        return 0;
    }
    pipe(fds);
    pthread_t t;
    pthread_create(&t, NULL, in_read, NULL);
    pthread_create(&t, NULL, in_cond, NULL);
    pthread_create(&t, NULL, in_sleep, NULL);
    /* Until the condition waiter is in its wait (it holds the lock till then). */
    for (;;) {
        pthread_mutex_lock(&lock);
        int in = waiting;
        pthread_mutex_unlock(&lock);
        if (in)
            break;
        sched_yield();
    }
    printf("before exec: %d threads\n", threads_now());
    fflush(stdout);
    char* args[] = {argv[0], "again", NULL};
    execve("/proc/self/exe", args, environ);
    perror("execve");
    return 1;
}
