/* Producer/consumer over a bounded queue with condition variables: two
 * producers, two consumers, every item consumed exactly once. */
#include <pthread.h>
#include <stdio.h>

#define ITEMS 400
#define SLOTS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER, not_empty = PTHREAD_COND_INITIALIZER;
static int queue[SLOTS], head, count, produced, consumed_total;
static long sum[2];

static void *producer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (count == SLOTS && produced < ITEMS)
            pthread_cond_wait(&not_full, &lock);
        if (produced == ITEMS) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        queue[(head + count) % SLOTS] = ++produced;
        count++;
        pthread_cond_signal(&not_empty);
        pthread_mutex_unlock(&lock);
    }
}

static void *consumer(void *arg)
{
    long id = (long)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (count == 0 && consumed_total < ITEMS)
            pthread_cond_wait(&not_empty, &lock);
        if (count == 0) {
            pthread_mutex_unlock(&lock);
            pthread_cond_broadcast(&not_empty);
            return NULL;
        }
        int item = queue[head];
        head = (head + 1) % SLOTS;
        count--;
        consumed_total++;
        sum[id] += item;
        if (consumed_total == ITEMS)
            pthread_cond_broadcast(&not_empty);
        pthread_cond_signal(&not_full);
        pthread_mutex_unlock(&lock);
    }
}

int main(void)
{
    pthread_t p[2], c[2];
    for (long i = 0; i < 2; i++) {
        pthread_create(&c[i], NULL, consumer, (void *)i);
        pthread_create(&p[i], NULL, producer, NULL);
    }
    for (int i = 0; i < 2; i++) {
        pthread_join(p[i], NULL);
        pthread_mutex_lock(&lock);
        pthread_cond_broadcast(&not_full);
        pthread_mutex_unlock(&lock);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(c[i], NULL);
    printf("consumed %d items, total %ld (consumer 0: %ld, consumer 1: %ld)\n", consumed_total, sum[0] + sum[1],
           sum[0], sum[1]);
    return 0;
}
