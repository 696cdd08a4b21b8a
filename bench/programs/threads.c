/* Four threads, two workloads:
 *   threads lock N     each thread takes a shared mutex N times (lock-heavy:
 *                      contended futex calls)
 *   threads compute N  each thread runs N xorshift steps on its own (no
 *                      syscalls, no sharing)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_total, rounds;
static uint64_t results[THREADS];

static void *locker(void *arg)
{
    long id = (long)arg;
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(&lock);
        shared_total += id + 1;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void *computer(void *arg)
{
    long id = (long)arg;
    uint64_t x = 88172645463325252ull + (uint64_t)id;
    for (long i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    results[id] = x;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "lock") && strcmp(argv[1], "compute"))) {
        fprintf(stderr, "usage: %s lock|compute ROUNDS\n", argv[0]);
        return 2;
    }
    rounds = atol(argv[2]);
    void *(*fn)(void *) = strcmp(argv[1], "lock") == 0 ? locker : computer;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, fn, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t mix = (uint64_t)shared_total;
    for (int i = 0; i < THREADS; i++)
        mix = mix * 31 + results[i];
    printf("%s %ld: %llx\n", argv[1], rounds, (unsigned long long)mix);
    return 0;
}
