/* A long stretch of computation without syscalls between two writes of a
 * global: the reverse-execution benchmark watches `phase` and goes back
 * across the whole stretch. */
#include <stdio.h>
#include <stdlib.h>

volatile long phase;

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000000ul;
    unsigned long x = 88172645463325252ul, acc = 0;
    printf("start\n");
    fflush(stdout);
    phase = 1;
    for (unsigned long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x & 0xff;
    }
    phase = 2;
    printf("%lu\n", acc);
    return 0;
}
