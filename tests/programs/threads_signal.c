/* pthread_kill: the main thread sends SIGUSR1 to one worker, which waits for
 * it; the other worker keeps working and must not see it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t got_by[2];
static __thread int my_id;

static void on_usr1(int sig)
{
    (void)sig;
    got_by[my_id] = 1;
}

static void *waiter(void *arg)
{
    my_id = (int)(long)arg;
    if (my_id == 0) {
        while (!got_by[0])
            usleep(1000);
    } else {
        for (int i = 0; i < 20; i++)
            usleep(500);
    }
    return NULL;
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, waiter, (void *)i);
    usleep(2000);
    pthread_kill(t[0], SIGUSR1);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("worker 0 got SIGUSR1: %d, worker 1 got it: %d\n", (int)got_by[0], (int)got_by[1]);
    return 0;
}
