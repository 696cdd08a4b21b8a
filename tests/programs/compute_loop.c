/* Computes for about SECONDS (default 0.2) without a syscall, then says it
 * is done (how far it got depends on the machine's speed, so it is not
 * printed): a replay whose watchdog is shorter sees a thread that runs on. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.2;
    /* The length is measured once, so the loop itself makes no syscall. */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    volatile unsigned long x = 1;
    for (unsigned long i = 0; i < 10000000; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    clock_gettime(CLOCK_MONOTONIC, &b);
    double probe = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    unsigned long rounds = (unsigned long)(seconds / (probe > 1e-6 ? probe : 1e-6) * 1e7);
    for (unsigned long i = 0; i < rounds; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul; /* the long loop */
    printf("computed for %.1f s\n", seconds);
    return 0;
}
