/* Four threads add to a mutex-protected counter. */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *work(void *arg)
{
    long step = (long)arg;
    for (int i = 0; i < 2000; i++) {
        pthread_mutex_lock(&lock);
        total += step;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, work, (void *)(i + 1));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("total %ld\n", total);
    return 0;
}
