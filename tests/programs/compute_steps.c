/* Computes in STEPS steps of ROUNDS rounds each, printing each step's
 * result, so a recording has events spread over its whole length (persistent
 * landmarks are taken at event boundaries). Usage:
 *   compute_steps STEPS ROUNDS [MEGABYTES [THREADS]]
 * MEGABYTES of heap are filled first and folded into the results; with
 * THREADS > 1 the other threads do their own steps and print too. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long steps, rounds;
static uint64_t* heap;
static size_t heap_words;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t work(uint64_t x, long n)
{
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static void run(long id)
{
    uint64_t x = 88172645463325252ull + (uint64_t)id;
    for (long s = 0; s < steps; s++) {
        x = work(x, rounds);
        if (heap_words)
            x ^= heap[(x >> 3) % heap_words]++;
        char line[80];
        int n = snprintf(line, sizeof line, "thread %ld step %ld: %016llx\n", id, s, (unsigned long long)x);
        pthread_mutex_lock(&out_lock);
        write(1, line, (size_t)n);
        pthread_mutex_unlock(&out_lock);
    }
}

static void* worker(void* arg)
{
    run((long)(intptr_t)arg);
    return NULL;
}

int main(int argc, char** argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: compute_steps STEPS ROUNDS [MEGABYTES [THREADS]]\n");
        return 2;
    }
    steps = atol(argv[1]);
    rounds = atol(argv[2]);
    long megabytes = argc > 3 ? atol(argv[3]) : 0;
    long threads = argc > 4 ? atol(argv[4]) : 1;
    heap_words = (size_t)megabytes * (1 << 20) / sizeof(uint64_t);
    if (heap_words) {
        heap = malloc(heap_words * sizeof(uint64_t));
        for (size_t i = 0; i < heap_words; i++)
            heap[i] = i * 2654435761u;
    }
    pthread_t tids[16];
    if (threads > 16)
        threads = 16;
    for (long t = 1; t < threads; t++)
        pthread_create(&tids[t], NULL, worker, (void*)(intptr_t)t);
    run(0);
    for (long t = 1; t < threads; t++)
        pthread_join(tids[t], NULL);
    printf("done\n");
    return 0;
}
