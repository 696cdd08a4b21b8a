/* SIGALRM arrives while the program spins in a delay loop written as one
 * instruction that jumps to itself (`loop .`: rcx taken down to 0), as
 * delay loops often are; the handler counts the ticks. Each round is 200
 * million executions of that instruction: replay must find where each
 * signal came without judging every one of them. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig)
{
    (void)sig;
    /* The third tick is the last (a fourth, already pending on a loaded
     * machine, is discarded): every run makes the same syscalls. */
    if (++ticks == 3) {
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        signal(SIGALRM, SIG_IGN);
    }
}

static void spin(void)
{
    __asm__ volatile("mov $200000000, %%ecx\n\t"
                     "1: loop 1b\n\t"
                     :
                     :
                     : "ecx");
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, 20000}, {0, 20000}};
    setitimer(ITIMER_REAL, &every, NULL);
    int rounds = 0;
    while (ticks < 3 && rounds < 100) {
        spin();
        rounds++;
    }
    printf("%d ticks in %d rounds\n", (int)ticks, rounds);
    return ticks == 3 ? 0 : 1;
}
