/* Buffers a call both reads and writes: glibc's sleep() passes one timespec
 * as clock_nanosleep's request and remainder, and a signal makes the kernel
 * write the remainder over the request; rt_sigprocmask with one set as new
 * and old. The recorder captures inputs as the call returns, where these
 * hold what the kernel wrote, not what the program passed. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void on_alarm(int sig)
{
    (void)sig;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerspec it = {{0, 0}, {0, 20 * 1000 * 1000}};
    timer_t timer;
    struct sigevent sev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGALRM};
    timer_create(CLOCK_MONOTONIC, &sev, &timer);
    timer_settime(timer, 0, &it, NULL);
    struct timespec ts = {5, 0};
    int r = clock_nanosleep(CLOCK_REALTIME, 0, &ts, &ts); /* interrupted after 20 ms */
    printf("clock_nanosleep: %d, remainder %s\n", r, ts.tv_sec < 5 && ts.tv_sec >= 4 ? "about 5 s" : "odd");

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    syscall(SYS_rt_sigprocmask, SIG_BLOCK, &set, &set, sizeof(long)); /* the old mask over the new */
    printf("old mask has SIGUSR1: %d\n", sigismember(&set, SIGUSR1));
    return 0;
}
