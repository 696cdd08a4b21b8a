/* Joinable and detached threads: the detached ones report through a
 * semaphore, the joinable ones through their return values. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

static sem_t done;
static long detached_sum;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *joinable(void *arg)
{
    long n = (long)arg;
    long *result = malloc(sizeof *result);
    *result = n * n;
    return result;
}

static void *detached(void *arg)
{
    pthread_mutex_lock(&lock);
    detached_sum += (long)arg;
    pthread_mutex_unlock(&lock);
    sem_post(&done);
    return NULL;
}

int main(void)
{
    sem_init(&done, 0, 0);
    pthread_t j[3];
    for (long i = 0; i < 3; i++) {
        pthread_t d;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_create(&d, &attr, detached, (void *)(10 * (i + 1)));
        pthread_attr_destroy(&attr);
        pthread_create(&j[i], NULL, joinable, (void *)(i + 2));
    }
    long squares = 0;
    for (int i = 0; i < 3; i++) {
        void *r;
        pthread_join(j[i], &r);
        squares += *(long *)r;
        free(r);
    }
    for (int i = 0; i < 3; i++)
        sem_wait(&done);
    printf("joined: %ld, detached: %ld\n", squares, detached_sum);
    return 0;
}
