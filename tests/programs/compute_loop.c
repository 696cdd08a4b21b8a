/* Computes for about SECONDS (default 0.2) without a syscall, then says it
 * is done (how far it got depends on the machine's speed, so it is not
 * printed): a replay whose watchdog is shorter sees a thread that runs on. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char** argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.2;
    /* The speed is measured before the loop, so the loop itself makes no
     * syscall: the fastest of several short measurements, as one taken
     * while another process had the CPU would make the loop too short
     * (a replay on a less busy machine would then end within a watchdog
     * meant to stop it). */
    volatile unsigned long x = 1;
    double probe = 1e9;
    for (int m = 0; m < 8; m++) {
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (unsigned long i = 0; i < 2000000; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        clock_gettime(CLOCK_MONOTONIC, &b);
        double took = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
        if (took < probe)
            probe = took;
    }
    unsigned long rounds = (unsigned long)(seconds / (probe > 1e-6 ? probe : 1e-6) * 2e6);
    for (unsigned long i = 0; i < rounds; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul; /* the long loop */
    printf("computed for %.1f s\n", seconds);
    return 0;
}
