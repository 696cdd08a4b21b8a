// Thread-local storage under the debugger: errno and a __thread variable
// hold different values in the main thread and in a worker when each
// reaches observe().
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

__thread int tls_counter;

__attribute__((noinline)) void observe(int value)
{
    printf("observed %d\n", value);
    fflush(stdout);
}

static void* worker(void* arg)
{
    tls_counter = (int)(long)arg;
    if (open("/nonexistent/worker", O_RDONLY) < 0) {
        int saved = errno; // ENOENT
        observe(tls_counter);
        errno = saved;
    }
    return NULL;
}

int main(void)
{
    tls_counter = 7;
    if (close(-1) < 0) {
        int saved = errno; // EBADF
        observe(tls_counter);
        errno = saved;
    }
    pthread_t t;
    pthread_create(&t, NULL, worker, (void*)42L);
    pthread_join(t, NULL);
    printf("main errno %d counter %d\n", errno, tls_counter);
    return 0;
}
