/* SIGALRM arrives while the program computes; the handler counts them.
 * The loop makes no syscall, so the signals land in user code and the
 * recorder delivers them where the thread stands. Each iteration is a few
 * microseconds of straight-line work, so replay finds each delivery point
 * within a few thousand breakpoint stops. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    /* The third tick is the last: a fourth, due 10 ms later or already
     * pending on a loaded machine, is discarded rather than handled, so
     * that every run makes the same syscalls. */
    if (++ticks == 3) {
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        signal(SIGALRM, SIG_IGN);
    }
}

#define MIX x = (x ^ (x >> 7)) * 0x9e3779b97f4a7c15ul + (x / 7);
#define MIX10 MIX MIX MIX MIX MIX MIX MIX MIX MIX MIX
#define MIX100 MIX10 MIX10 MIX10 MIX10 MIX10 MIX10 MIX10 MIX10 MIX10 MIX10

static unsigned long work(unsigned long x)
{
    MIX100 MIX100 MIX100 MIX100 MIX100
    return x;
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
        x = work(x);
        iterations++;
    }
    printf("ticks %d\n", (int)ticks);
    printf("iterations %lu state %lx\n", iterations, x);
    return 0;
}
