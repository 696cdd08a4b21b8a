/* Four threads meet at a barrier after each of five rounds; each round's
 * work reads what the others wrote in the round before. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS 5

static pthread_barrier_t barrier;
static long cell[ROUNDS + 1][THREADS];

static void *work(void *arg)
{
    long id = (long)arg;
    for (int r = 1; r <= ROUNDS; r++) {
        long v = id + 1;
        for (int j = 0; j < THREADS; j++)
            v += cell[r - 1][j] * (j + 1);
        cell[r][id] = v % 1000003;
        pthread_barrier_wait(&barrier);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int j = 0; j < THREADS; j++)
        printf("thread %d: %ld\n", j, cell[ROUNDS][j]);
    return 0;
}
