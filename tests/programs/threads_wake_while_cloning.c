/* Eight consumers asleep on one condition variable while the main thread,
 * after each broadcast, creates and joins a short-lived thread: under
 * --parallel, a consumer's wake-up often comes in the trace while the main
 * thread is inside its clone, so replay must wake the sleepers through
 * another thread than the one in the middle of its fork. */
#include <pthread.h>
#include <stdio.h>

#define CONSUMERS 8
#define ROUNDS 300

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static int items, taken, done;

static void *consumer(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (items == 0 && !done)
            pthread_cond_wait(&ready, &lock);
        if (items == 0) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        items--;
        taken++;
        pthread_mutex_unlock(&lock);
    }
}

static void *returns_at_once(void *arg)
{
    return arg;
}

int main(void)
{
    pthread_t consumers[CONSUMERS];
    for (int i = 0; i < CONSUMERS; i++)
        pthread_create(&consumers[i], NULL, consumer, NULL);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_mutex_lock(&lock);
        items += CONSUMERS;
        pthread_cond_broadcast(&ready);
        pthread_mutex_unlock(&lock);
        pthread_t brief;
        pthread_create(&brief, NULL, returns_at_once, NULL);
        pthread_join(brief, NULL);
    }
    pthread_mutex_lock(&lock);
    done = 1;
    pthread_cond_broadcast(&ready);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < CONSUMERS; i++)
        pthread_join(consumers[i], NULL);
    printf("%d items taken by %d consumers in %d rounds\n", taken, CONSUMERS, ROUNDS);
    return 0;
}
