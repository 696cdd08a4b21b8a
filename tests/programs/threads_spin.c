/* Two threads hand a token back and forth through atomic flags, spinning
 * without any syscall while they wait: the recorder must preempt the spinner
 * for the other thread to run, and replay must find those points again.
 * `threads_spin blocked`: both threads block every signal first (as xz's
 * workers do), so no hardware breakpoint's SIGTRAP reaches them. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define ROUNDS 3

static atomic_int turn;
static long trace_of_work[2 * ROUNDS];

static void block_all_signals(void)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static void* partner(void* arg)
{
    if (arg)
        block_all_signals();
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&turn) != 1)
            ;
        trace_of_work[2 * r + 1] = r * 7 + 1;
        atomic_store(&turn, 0);
    }
    return NULL;
}

int main(int argc, char** argv)
{
    int blocked = argc > 1 && strcmp(argv[1], "blocked") == 0;
    pthread_t t;
    pthread_create(&t, NULL, partner, blocked ? &turn : NULL);
    if (blocked)
        block_all_signals();
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
