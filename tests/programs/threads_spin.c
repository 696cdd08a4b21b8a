/* Two threads hand a token back and forth through atomic flags, spinning
 * without any syscall while they wait: the recorder must preempt the spinner
 * for the other thread to run, and replay must find those points again. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define ROUNDS 3

static atomic_int turn;
static long trace_of_work[2 * ROUNDS];

static void *partner(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&turn) != 1)
            ;
        trace_of_work[2 * r + 1] = r * 7 + 1;
        atomic_store(&turn, 0);
    }
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, partner, NULL);
    for (int r = 0; r < ROUNDS; r++) {
        trace_of_work[2 * r] = r * 5 + 2;
        atomic_store(&turn, 1);
        while (atomic_load(&turn) != 0)
            ;
    }
    pthread_join(t, NULL);
    long s = 0;
    for (int i = 0; i < 2 * ROUNDS; i++)
        s = s * 10 + trace_of_work[i];
    printf("handed over %d times, work %ld\n", 2 * ROUNDS, s);
    return 0;
}
