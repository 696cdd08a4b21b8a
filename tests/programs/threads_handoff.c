/* Many syscalls that never block (reads of a regular file, getpid, fstat,
 * clock_gettime, lseek, writes to /dev/null) between mutex and condition
 * variable hand-offs, a pipe one thread blocks on, and short sleeps. The
 * output depends on the interleaving (the order the threads took the lock,
 * a racy counter) and on what the calls returned (clocks), so a replay
 * that ran the threads in another order, or served another result,
 * prints something else. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define THREADS 4
#define RING_ROUNDS 60
#define FREE_ROUNDS 300
#define LOG_MAX (THREADS * FREE_ROUNDS)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static int file_fd, null_fd, pipe_fds[2];
static uint64_t hashes[THREADS];
static char order[LOG_MAX + 1];
static int order_len;
static volatile long racy;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

/* A burst of calls that never block. */
static uint64_t burst(uint64_t h, long id, long round)
{
    unsigned char buf[512];
    struct stat st;
    struct timespec ts;
    ssize_t n = pread(file_fd, buf, sizeof(buf), (off_t)((round * 97 + id * 13) % 4096));
    h = mix(h, (uint64_t)n);
    if (n > 0)
        h = mix(h, buf[(round + id) % n]);
    h = mix(h, (uint64_t)syscall(SYS_getpid));
    fstat(file_fd, &st);
    h = mix(h, (uint64_t)st.st_size);
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
    h = mix(h, (uint64_t)ts.tv_nsec & 0xff);
    h = mix(h, (uint64_t)lseek(null_fd, 0, SEEK_CUR));
    h = mix(h, (uint64_t)write(null_fd, buf, 64));
    return h;
}

static void *worker(void *arg)
{
    long id = (long)arg;
    uint64_t h = 1469598103934665603ull;

    /* A ring: each thread in turn, handed on by a condition variable. */
    for (long r = 0; r < RING_ROUNDS; r++) {
        pthread_mutex_lock(&lock);
        while (turn != id)
            pthread_cond_wait(&turn_changed, &lock);
        h = burst(h, id, r);
        turn = (turn + 1) % THREADS;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&lock);
    }
    /* Free for all: whoever gets the lock logs itself. */
    for (long r = 0; r < FREE_ROUNDS; r++) {
        h = burst(h, id, r);
        pthread_mutex_lock(&lock);
        order[order_len++] = (char)('a' + id);
        pthread_mutex_unlock(&lock);
        long v = racy;
        h = mix(h, (uint64_t)v);
        racy = v + 1;
        if (r % 50 == 0) {
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
        }
    }
    /* Thread 0 feeds the pipe the others block on. */
    if (id == 0) {
        for (int i = 1; i < THREADS; i++) {
            usleep(2000);
            char c = (char)('0' + i);
            write(pipe_fds[1], &c, 1);
        }
    } else {
        char c;
        if (read(pipe_fds[0], &c, 1) == 1)
            h = mix(h, (uint64_t)c);
    }
    hashes[id] = h;
    return NULL;
}

int main(void)
{
    file_fd = open("/proc/self/exe", O_RDONLY);
    null_fd = open("/dev/null", O_WRONLY);
    if (file_fd < 0 || null_fd < 0 || pipe(pipe_fds) != 0) {
        perror("threads_handoff");
        return 1;
    }
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    uint64_t all = 0;
    for (int i = 0; i < THREADS; i++)
        all = mix(all, hashes[i]);
    uint64_t order_hash = 0;
    for (int i = 0; i < order_len; i++)
        order_hash = mix(order_hash, (uint64_t)order[i]);
    printf("racy %ld, order %.*s… (%016llx), state %016llx\n", racy, 40, order, (unsigned long long)order_hash,
           (unsigned long long)all);
    return 0;
}
