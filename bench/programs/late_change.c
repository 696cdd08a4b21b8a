/* Compute-bound with an event every so often: STEPS rounds of xorshift work,
 * each ended by a getppid() (an event a landmark can sit on), and one store
 * to `damaged` at 95% of the rounds. `rewind watch 'damaged == 0'` has to
 * find that store near the end of a long recording. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

volatile int damaged;
volatile unsigned long sink;

static unsigned long round_of_work(unsigned long x, unsigned long iterations)
{
    for (unsigned long i = 0; i < iterations; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return x;
}

int main(int argc, char **argv)
{
    unsigned long steps = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
    unsigned long iterations = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    unsigned long x = 88172645463325252ul;
    for (unsigned long s = 0; s < steps; s++) {
        x = round_of_work(x, iterations);
        if (s == steps * 95 / 100)
            damaged = 1; /* CULPRIT */
        sink = x + (unsigned long)getppid();
    }
    printf("%lu %d\n", x, damaged);
    return 0;
}
