/* Four threads increment a counter without a lock. The read and the write
 * are separated by a syscall, so the final value depends on how the threads
 * interleave: it differs from run to run, and a replay must reproduce the
 * value of its own recording. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static volatile long counter;
static long seen[4][50];

static void *work(void *arg)
{
    long id = (long)arg;
    for (int i = 0; i < 50; i++) {
        long v = counter;
        seen[id][i] = v;
        sched_yield();
        counter = v + 1;
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    unsigned long mix = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 50; j++)
            mix = mix * 31 + (unsigned long)seen[i][j];
    printf("counter %ld (lost %ld updates), history %lx\n", counter, 200 - counter, mix);
    return 0;
}
