/* A pool of four workers takes jobs from a queue (mutex and condition
 * variables); each job hashes a block and adds to a per-worker tally. The
 * main thread waits for all jobs to finish, then stops the pool. */
#include <pthread.h>
#include <stdio.h>

#define WORKERS 4
#define JOBS 300

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work_ready = PTHREAD_COND_INITIALIZER, all_done = PTHREAD_COND_INITIALIZER;
static int next_job, finished, stopping;
static unsigned long tally[WORKERS], done_by[WORKERS];

static unsigned long job(int n)
{
    unsigned long h = 1469598103934665603ul ^ (unsigned long)n;
    for (int i = 0; i < 2000; i++)
        h = (h ^ (unsigned long)i) * 1099511628211ul;
    return h % 1000;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (next_job == JOBS && !stopping)
            pthread_cond_wait(&work_ready, &lock);
        if (stopping && next_job == JOBS)
            break;
        int n = next_job++;
        pthread_mutex_unlock(&lock);
        unsigned long r = job(n);
        pthread_mutex_lock(&lock);
        tally[id] += r;
        done_by[id]++;
        if (++finished == JOBS)
            pthread_cond_signal(&all_done);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

int main(void)
{
    pthread_t t[WORKERS];
    pthread_mutex_lock(&lock);
    next_job = JOBS; /* no work until every worker is there */
    pthread_mutex_unlock(&lock);
    for (long i = 0; i < WORKERS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    pthread_mutex_lock(&lock);
    next_job = 0;
    pthread_cond_broadcast(&work_ready);
    while (finished < JOBS)
        pthread_cond_wait(&all_done, &lock);
    stopping = 1;
    pthread_cond_broadcast(&work_ready);
    pthread_mutex_unlock(&lock);
    unsigned long total = 0;
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(t[i], NULL);
        total += tally[i];
    }
    for (int i = 0; i < WORKERS; i++)
        printf("worker %d: %lu jobs\n", i, done_by[i]);
    printf("total %lu\n", total);
    return 0;
}
