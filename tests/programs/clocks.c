/* Time through libc, which normally goes to the vDSO without a syscall. */
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

int main(void)
{
    struct timespec rt, mono;
    struct timeval tv;
    time_t t = time(NULL);
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    gettimeofday(&tv, NULL);
    printf("time %ld\n", (long)t);
    printf("realtime %ld.%09ld\n", (long)rt.tv_sec, rt.tv_nsec);
    printf("monotonic %ld.%09ld\n", (long)mono.tv_sec, mono.tv_nsec);
    printf("gettimeofday %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    return 0;
}
