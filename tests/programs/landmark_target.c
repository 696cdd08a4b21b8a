/* A process to take a persistent landmark of (tests/tools/landmark_check.cpp).
 * Usage: landmark_target THREADS MEGABYTES. Fills MEGABYTES of heap, starts
 * THREADS-1 more threads, prints "go ADDRESS" and then every thread spins in
 * user code (no system call) until the int at ADDRESS becomes non-zero; then
 * each computes some more and main prints what they found. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile int go;
static volatile int ready;

static uint64_t work(uint64_t x, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

static void* other(void* arg)
{
    uint64_t* result = arg;
    uint64_t a = work(*result, 100000);
    __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
    while (!go)
        ;
    *result = work(a, 200000);
    return NULL;
}

int main(int argc, char** argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    size_t bytes = (argc > 2 ? (size_t)atol(argv[2]) : 1) << 20;
    if (threads < 1 || threads > 8)
        return 2;
    uint64_t* big = malloc(bytes);
    if (!big)
        return 3;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < bytes / 8; i++)
        big[i] = x = work(x, 1);
    pthread_t tid[8];
    uint64_t results[8];
    for (int i = 1; i < threads; i++) {
        results[i] = (uint64_t)i * 7919;
        pthread_create(&tid[i], NULL, other, &results[i]);
    }
    uint64_t a = work(1, 100000);
    while (ready < threads - 1)
        ;
    printf("go %p\n", (void*)&go);
    fflush(stdout);
    while (!go)
        ;
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes / 8; i++)
        sum += big[i] * (i | 1);
    printf("main %016llx heap %016llx\n", (unsigned long long)work(a, 300000), (unsigned long long)sum);
    for (int i = 1; i < threads; i++) {
        pthread_join(tid[i], NULL);
        printf("thread %d %016llx\n", i, (unsigned long long)results[i]);
    }
    return 0;
}
