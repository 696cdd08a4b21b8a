/* Twelve threads that each add to a shared total under a mutex, joined in
 * order. Their stacks (8 MiB each) are more than glibc keeps in its cache
 * of stacks, so pthread_join frees some of them (munmap) inside the call:
 * a syscall of the call itself, before its acquire event in a parallel
 * trace. */
#include <pthread.h>
#include <stdio.h>

#define THREADS 12

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void* work(void* arg)
{
    long id = (long)arg;
    for (long i = 0; i < 500; i++) {
        pthread_mutex_lock(&lock);
        total += id * i % 7;
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, (void*)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("total %ld\n", total);
    return 0;
}
