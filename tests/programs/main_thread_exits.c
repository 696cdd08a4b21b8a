/* The main thread ends with SYS_exit(7) while another thread runs on: the
 * process lives until that thread ends it, with exit(0). The main thread
 * stays a zombie that waitpid reports only then, with the process's status
 * (0, not 7), and until then the other thread must still get the CPU. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void* outlive(void* arg)
{
    (void)arg;
    usleep(20 * 1000);
    printf("the other thread outlived main\n");
    exit(0);
}

int main(void)
{
    pthread_t thread;
    pthread_create(&thread, NULL, outlive, NULL);
    syscall(SYS_exit, 7);
    return 1;
}
