/* Says hello, then computes ROUNDS rounds (default 2,000,000) without a
 * syscall before it exits: the recording's last stretch, between its last
 * event and the exit call, is millions of instructions long. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 2000000;
    printf("computing %ld rounds\n", rounds);
    fflush(stdout);
    unsigned long x = 88172645463325252ul;
    for (long i = 0; i < rounds; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    return (int)(x & 0x3f); /* the last line before the exit */
}
