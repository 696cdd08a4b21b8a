/* Compute-bound: no syscalls in the hot loop. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000000ul;
    unsigned long x = 88172645463325252ul, acc = 0;
    for (unsigned long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        acc += x & 0xff;
    }
    printf("%lu\n", acc);
    return 0;
}
