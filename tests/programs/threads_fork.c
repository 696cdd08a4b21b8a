/* A process that has run a thread forks and waits for its child, and both
 * read the CPU's random numbers. The join waits in a futex whose sixth
 * argument (r9) is still there when the parent's wait4 takes SIGCHLD; a
 * replay that does not wait there has another r9. */
#include <cpuid.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static unsigned long long hardware_random(void)
{
    unsigned a, b, c, d;
    unsigned long long v = 0;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND))
        __asm__ volatile("1: rdrand %0\n\tjnc 1b" : "=r"(v) : : "cc");
    return v;
}

static void *work(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&lock);
        total += i;
        pthread_mutex_unlock(&lock);
    }
    printf("total %ld\n", total);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    pthread_join(t, NULL); /* waits for the thread here, in the recording */
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        printf("child %llx\n", hardware_random());
        return 3;
    }
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent %llx, child exited %d\n", hardware_random(), WEXITSTATUS(status));
    return 0;
}
