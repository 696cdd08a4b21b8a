/* A thread takes a descriptor table of its own (unshare(CLONE_FILES)) and
 * closes its standard output, then points it at /dev/null; the main
 * thread's table is untouched, and what it prints after must reach the
 * user in replay as it did. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

static void *own_table(void *arg)
{
    (void)arg;
    if (unshare(CLONE_FILES) != 0)
        return (void *)1;
    close(1);
    int null = open("/dev/null", O_WRONLY);
    if (null != 1)
        return (void *)2;
    dprintf(1, "the thread's output goes to /dev/null\n");
    return NULL;
}

int main(void)
{
    printf("before the thread\n");
    fflush(stdout);
    pthread_t thread;
    void *result = (void *)-1;
    pthread_create(&thread, NULL, own_table, NULL);
    pthread_join(thread, &result);
    printf("after the thread (it returned %ld): the main thread still prints\n", (long)result);
    return 0;
}
