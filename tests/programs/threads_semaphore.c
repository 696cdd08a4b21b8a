/* A producer and three consumers pass items through a ring buffer guarded
 * by counting semaphores (free slots, full slots) and a binary semaphore
 * for the consumers' read index. Which consumer gets which item depends on
 * the interleaving: the output shows it. */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>

#define ITEMS 600
#define SLOTS 5
#define CONSUMERS 3

static sem_t free_slots, full_slots, take;
static int ring[SLOTS], out;
static long got[CONSUMERS], weighted[CONSUMERS];

static void *producer(void *arg)
{
    (void)arg;
    for (int i = 1; i <= ITEMS + CONSUMERS; i++) {
        sem_wait(&free_slots);
        ring[i % SLOTS] = i <= ITEMS ? i : 0; /* 0: stop */
        sem_post(&full_slots);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    long id = (long)arg;
    for (;;) {
        sem_wait(&full_slots);
        sem_wait(&take);
        int item = ring[++out % SLOTS];
        sem_post(&take);
        sem_post(&free_slots);
        if (!item)
            return NULL;
        got[id]++;
        weighted[id] += item * (id + 1);
    }
}

int main(void)
{
    pthread_t p, c[CONSUMERS];
    sem_init(&free_slots, 0, SLOTS);
    sem_init(&full_slots, 0, 0);
    sem_init(&take, 0, 1);
    for (long i = 0; i < CONSUMERS; i++)
        pthread_create(&c[i], NULL, consumer, (void *)i);
    pthread_create(&p, NULL, producer, NULL);
    pthread_join(p, NULL);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(c[i], NULL);
    for (int i = 0; i < CONSUMERS; i++)
        printf("consumer %d: %ld items, weighted %ld\n", i, got[i], weighted[i]);
    return 0;
}
