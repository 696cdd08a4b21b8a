// watch: stats.max_item >= 1000000
// thread: consumer
//
// A producer and a consumer share a bounded queue (a mutex and two
// condition variables). Items are below 1,000 but for one, late, that the
// producer computes wrongly; the consumer records the largest item it has
// seen, and the watched expression turns true in the consumer thread when
// it takes that item. main names the threads (a write to /proc that the
// recording keeps), so that a report's thread can be told by name.
//
//   watch_threads N    N scales the number of items (0: tiny)
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define QUEUE 256
#define ROUNDS 200 // work per item, on each side

static struct {
    pthread_mutex_t lock;
    pthread_cond_t not_empty, not_full;
    unsigned long item[QUEUE];
    long head, tail; // head - tail items are waiting
} q = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0};

struct {
    unsigned long max_item;
    unsigned long sum;
    long taken;
} stats;

static long items, bad_item;

static unsigned long mix(unsigned long v)
{
    for (int r = 0; r < ROUNDS; r++)
        v = v * 6364136223846793005ul + 1442695040888963407ul;
    return v;
}

static void *producer(void *arg)
{
    (void)arg;
    unsigned long x = 1;
    for (long i = 0; i < items; i++) {
        x = mix(x);
        unsigned long v = (x >> 33) % 1000;
        if (i == bad_item)
            v += 1000000; // the wrong computation, once
        pthread_mutex_lock(&q.lock);
        while (q.head - q.tail == QUEUE)
            pthread_cond_wait(&q.not_full, &q.lock);
        q.item[q.head++ % QUEUE] = v;
        pthread_cond_signal(&q.not_empty);
        pthread_mutex_unlock(&q.lock);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    for (long i = 0; i < items; i++) {
        pthread_mutex_lock(&q.lock);
        while (q.head == q.tail)
            pthread_cond_wait(&q.not_empty, &q.lock);
        unsigned long v = q.item[q.tail++ % QUEUE];
        pthread_cond_signal(&q.not_full);
        pthread_mutex_unlock(&q.lock);
        if (v > stats.max_item)
            stats.max_item = v; /* CULPRIT */
        stats.sum += mix(v) >> 40;
        stats.taken++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    items = scale ? 200000 * scale : 20000;
    bad_item = items / 100 * 85 + 7;
    pthread_t p, c;
    // Named before either can take the lock: a thread that had already
    // finished could not be named.
    pthread_mutex_lock(&q.lock);
    pthread_create(&c, NULL, consumer, NULL);
    pthread_create(&p, NULL, producer, NULL);
    pthread_setname_np(c, "consumer");
    pthread_setname_np(p, "producer");
    pthread_mutex_unlock(&q.lock);
    pthread_join(p, NULL);
    pthread_join(c, NULL);
    printf("%ld items: sum %lx, max %lu\n", stats.taken, stats.sum, stats.max_item);
    return 0;
}
