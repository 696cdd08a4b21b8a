/* Threads, three workloads:
 *   threads lock N     four threads each take a shared mutex N times
 *                      (lock-heavy: contended futex calls)
 *   threads compute N  four threads each run N xorshift steps on their own
 *                      (no syscalls, no sharing)
 *   threads reads N    eight threads each read 4 KiB of a regular file N
 *                      times (syscall-heavy: calls that never block)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>

#define THREADS 4
#define READERS 8
#define READ_BYTES 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long shared_total, rounds;
static uint64_t results[READERS];
static int file_fd = -1;

static void* locker(void* arg)
{
    long id = (long)arg;
    for (long i = 0; i < rounds; i++) {
        pthread_mutex_lock(&lock);
        shared_total += id + 1;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

static void* computer(void* arg)
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

static void* reader(void* arg)
{
    long id = (long)arg;
    static __thread unsigned char buf[READ_BYTES];
    uint64_t sum = 0;
    for (long i = 0; i < rounds; i++) {
        ssize_t n = pread(file_fd, buf, sizeof(buf), (off_t)((i + id) % 4) * 512);
        if (n <= 0)
            abort();
        sum = sum * 31 + buf[(i * 7) % n];
    }
    results[id] = sum;
    return NULL;
}

int main(int argc, char** argv)
{
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "lock") && strcmp(argv[1], "compute") && strcmp(argv[1], "reads"))) {
        fprintf(stderr, "usage: %s lock|compute|reads ROUNDS [RESIDENT_MIB]\n", argv[0]);
        return 2;
    }
    rounds = atol(argv[2]);
    // A large resident set, every page written: what the recorder's look at
    // a thread's written pages costs grows with it.
    size_t resident = argc == 4 ? strtoul(argv[3], NULL, 10) << 20 : 0;
    char* ballast = resident ? malloc(resident) : NULL;
    if (resident && !ballast)
        return 1;
    for (size_t i = 0; i < resident; i += 4096)
        ballast[i] = (char)i;
    void* (*fn)(void*) = strcmp(argv[1], "lock") == 0 ? locker : strcmp(argv[1], "compute") == 0 ? computer : reader;
    int threads = fn == reader ? READERS : THREADS;
    if (fn == reader && (file_fd = open("/proc/self/exe", O_RDONLY)) < 0) {
        perror("/proc/self/exe");
        return 1;
    }
    pthread_t t[READERS];
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, fn, (void*)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    uint64_t mix = (uint64_t)shared_total;
    for (int i = 0; i < threads; i++)
        mix = mix * 31 + results[i];
    printf("%s %ld: %llx\n", argv[1], rounds, (unsigned long long)mix);
    return 0;
}
