/* Three things replay of a parallel recording must keep as they were:
 * - a thread that blocks every signal (as xz does around its workers) keeps
 *   SIGTRAP blocked through its locks (replay stops it there with an int3,
 *   and the kernel unblocks a SIGTRAP it forces);
 * - a condition wait with a deadline returns as it did in the recording:
 *   woken long before a far deadline, timed out at a near one (its
 *   absolute deadline comes from the recorded clock);
 * - a pthread_once whose initializer calls pthread_once. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready;
static int posted, rounds_done;
static pthread_once_t outer_once = PTHREAD_ONCE_INIT, inner_once = PTHREAD_ONCE_INIT;
static int inits;

static void inner_init(void)
{
    inits += 10;
}

static void outer_init(void)
{
    pthread_once(&inner_once, inner_init);
    inits += 1;
}

static struct timespec after_ms(long ms)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += ms / 1000;
    t.tv_nsec += (ms % 1000) * 1000000;
    if (t.tv_nsec >= 1000000000) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000;
    }
    return t;
}

static void* poster(void* arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(&lock);
        posted++;
        pthread_cond_signal(&ready);
        pthread_mutex_unlock(&lock);
        pthread_mutex_lock(&lock);
        while (rounds_done < i + 1)
            pthread_cond_wait(&ready, &lock);
        pthread_mutex_unlock(&lock);
    }
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    printf("poster: SIGTRAP %s\n", sigismember(&now, SIGTRAP) ? "blocked" : "unblocked");
    return NULL;
}

int main(void)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&ready, &attr);
    pthread_once(&outer_once, outer_init);

    pthread_t t;
    pthread_create(&t, NULL, poster, NULL);
    int woken = 0, timeouts = 0;
    for (int i = 0; i < 20; i++) {
        pthread_mutex_lock(&lock);
        struct timespec far = after_ms(30000);
        while (posted < i + 1) {
            int r = pthread_cond_timedwait(&ready, &lock, &far);
            if (r == ETIMEDOUT)
                timeouts++;
        }
        woken++;
        rounds_done++;
        pthread_cond_broadcast(&ready);
        pthread_mutex_unlock(&lock);
    }
    pthread_join(t, NULL);

    /* Nobody signals: a near deadline times out. */
    pthread_mutex_lock(&lock);
    struct timespec near = after_ms(20);
    int r = pthread_cond_timedwait(&ready, &lock, &near);
    pthread_mutex_unlock(&lock);

    printf("woken %d, far deadlines passed %d, near deadline: %s, inits %d\n", woken, timeouts,
           r == ETIMEDOUT ? "timed out" : "no time-out", inits);
    return 0;
}
