/* The main thread ends (pthread_exit) while its worker runs on; the worker
 * finishes and ends the process with a status of its own. Until then the
 * leader is a zombie that ptrace reports nothing of. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_t leader;

static void* work(void* arg)
{
    (void)arg;
    pthread_join(leader, NULL);
    long v = 1;
    for (int i = 0; i < 100000; i++)
        v = (v * 1103515245 + 12345) % 2147483647;
    printf("worker outlived the leader: %ld\n", v);
    exit(3);
}

int main(void)
{
    leader = pthread_self();
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    printf("leader leaves\n");
    fflush(stdout);
    pthread_exit(NULL);
}
