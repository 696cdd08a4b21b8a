/* A long-running process with a large resident set (argv[1] MiB, every
 * page written) that ticks every millisecond for argv[2] seconds and
 * reports the longest gap between two ticks: how long something (rewind
 * attaching to it) held it stopped. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    double seconds = argc > 2 ? atof(argv[2]) : 10;
    size_t size = mib << 20;
    char *p = malloc(size);
    if (!p)
        return 1;
    for (size_t i = 0; i < size; i += 4096)
        p[i] = (char)i;
    printf("ready\n");
    fflush(stdout);
    double start = now(), prev = start, longest = 0;
    struct timespec tick = {0, 1000000};
    while (prev - start < seconds) {
        nanosleep(&tick, NULL);
        double t = now();
        if (t - prev > longest)
            longest = t - prev;
        prev = t;
    }
    printf("longest gap %.1f ms (%zu MiB, %c)\n", longest * 1e3, mib, p[size / 2] + 'a' - (char)(size / 2));
    return 0;
}
