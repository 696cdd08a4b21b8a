/* A timer's SIGALRM ends a loop whose every round calls one function eight
 * times with the same registers; the rounds differ only in a count kept in
 * memory. The signal comes while the thread computes, far from any syscall,
 * so the recorder delivers it in user code: at an instruction of the outer
 * loop, which runs once a round, rather than of the function, which runs
 * eight times (replay stops at its executions). A round is a few hundred
 * instructions, within what the recorder steps through to see one (a round
 * longer than that is found by what it saw of it: docs/limits.md). The count
 * printed is fixed-width: a replay that ended the loop in another round
 * would print as many bytes. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile sig_atomic_t stop;
static volatile unsigned long rounds;
static volatile unsigned long sink;

static void on_alarm(int sig)
{
    (void)sig;
    stop = 1;
}

__attribute__((noinline)) void nested_rounds_inner(void)
{
    unsigned long x = 12345;
    for (int i = 0; i < 4; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    sink = x;
}

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 20000}};
    setitimer(ITIMER_REAL, &it, NULL);
    while (!stop) {
        for (int k = 0; k < 8; k++)
            nested_rounds_inner();
        rounds++;
    }
    printf("rounds %010lu\n", (unsigned long)rounds);
    return 0;
}
