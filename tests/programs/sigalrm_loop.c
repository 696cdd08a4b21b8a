/* SIGALRM arrives while the program computes; the handler counts them.
 * The loop makes no syscall, so the signals land in user code. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    ticks++;
}

static unsigned long step(unsigned long x)
{
    return x * 6364136223846793005ul + 1442695040888963407ul;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 10000}, {0, 10000}};
    setitimer(ITIMER_REAL, &it, NULL);
    unsigned long x = 1, iterations = 0;
    while (ticks < 3) {
        x = step(x);
        iterations++;
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("ticks %d\n", (int)ticks);
    printf("iterations %lu state %lx\n", iterations, x);
    return 0;
}
