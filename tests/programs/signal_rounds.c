/* A timer's SIGALRM ends a loop whose rounds differ only in memory: each
 * round calls the same function with the same argument, which computes in
 * registers, and counts the round in a global. The signal comes while the
 * thread computes, far from any syscall, so the recorder delivers it in
 * user code; replay must deliver it in the same round (the count printed
 * is fixed-width: a replay that ended the loop in another round would
 * print as many bytes). */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t stop;
static volatile unsigned long rounds;

static void on_alarm(int sig)
{
    (void)sig;
    stop = 1;
}

__attribute__((noinline)) static unsigned long mix(unsigned long x)
{
    for (int i = 0; i < 2000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned long x = 0;
    while (!stop) {
        x = mix(0);
        rounds++;
    }
    printf("rounds %08lu mix %lx\n", (unsigned long)rounds, x);
    return 0;
}
