/* Says hello, then computes ROUNDS rounds (default 2,000,000) without a
 * syscall before it exits: the recording's last stretch, between its last
 * event and the exit call, is millions of instructions long. At its end a
 * memset and a memcpy (glibc's vector stores) fill two buffers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char source[256], copy[256];

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
    size_t size = sizeof copy + (size_t)(rounds < 0); /* not a constant: libc's own memset and memcpy */
    memset(source, (int)(x & 0x7f), size);
    memcpy(copy, source, size);
    return copy[100] & 0x3f; /* the last line before the exit */
}
