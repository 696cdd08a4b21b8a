/* Six workers take jobs from the main thread under a condition variable.
 * The main thread prints their results (summed by a thread it joins),
 * hands out one more round and ends
 * the process at once: its workers are then asleep, or woken and on their
 * way out of their wait. The kernel reports the killed workers' exits and
 * the exit of the thread that ended them in either order. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define WORKERS 6
#define ROUNDS 20

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t job_ready = PTHREAD_COND_INITIALIZER;
static pthread_cond_t job_done = PTHREAD_COND_INITIALIZER;
static long result[WORKERS];
static int round_number, finished;

static void *work(void *arg)
{
    long id = (long)arg, v = id + 1;
    int seen = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (round_number == seen)
            pthread_cond_wait(&job_ready, &lock);
        seen = round_number;
        pthread_mutex_unlock(&lock);
        for (int i = 0; i < 20000; i++)
            v = (v * 1103515245 + 12345 + seen) % 2147483647;
        pthread_mutex_lock(&lock);
        result[id] = v;
        finished++;
        pthread_cond_signal(&job_done);
    }
    return NULL;
}

static void *sum_results(void *out)
{
    long sum = 0;
    for (int i = 0; i < WORKERS; i++)
        sum = (sum + result[i]) % 2147483647;
    *(long *)out = sum;
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int r = 1; r <= ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        finished = 0;
        round_number = r;
        pthread_cond_broadcast(&job_ready);
        while (finished < WORKERS)
            pthread_cond_wait(&job_done, &lock);
        pthread_mutex_unlock(&lock);
    }
    for (int i = 0; i < WORKERS; i++)
        printf("worker %d: %ld\n", i, result[i]);
    pthread_t summer;
    long sum;
    pthread_create(&summer, NULL, sum_results, &sum);
    pthread_join(summer, NULL);
    printf("sum: %ld\n", sum);
    fflush(stdout);
    pthread_mutex_lock(&lock);
    round_number++;
    pthread_cond_broadcast(&job_ready);
    pthread_mutex_unlock(&lock);
    exit(0);
}
