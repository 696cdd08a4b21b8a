/* Two threads take turns adding thirds, one rounding up and one down: the
 * rounding mode is each thread's own register state (MXCSR), so a replay
 * that gave one thread another's would print different sums. */
#include <fenv.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t turn_changed = PTHREAD_COND_INITIALIZER;
static int turn;
static double sums[2];
static volatile double three = 3.0;

static void *adder(void *arg)
{
    long id = (long)arg;
    fesetround(id ? FE_UPWARD : FE_DOWNWARD);
    double sum = 0;
    for (int round = 0; round < 300; round++) {
        pthread_mutex_lock(&lock);
        while (turn != id)
            pthread_cond_wait(&turn_changed, &lock);
        sum += (round + 1) / three;
        turn = !id;
        pthread_cond_broadcast(&turn_changed);
        pthread_mutex_unlock(&lock);
    }
    sums[id] = sum;
    return NULL;
}

int main(void)
{
    pthread_t threads[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, adder, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    printf("rounded down %a, rounded up %a\n", sums[0], sums[1]);
    return sums[0] < sums[1] ? 0 : 1;
}
