// watch: histogram.overflow != 0
//
// One long function, one tight loop, no calls and no syscalls inside: a
// histogram of the top byte of a pseudo-random sequence. On one late
// iteration the bucket index comes out one past the last bucket and the
// increment lands in the word after the buckets. The store runs on every
// iteration; only that one changes the watched word.
//
//   watch_tight_loop N    N scales the number of iterations (0: tiny)
#include <stdio.h>
#include <stdlib.h>

#define BUCKETS 256

struct {
    unsigned count[BUCKETS];
    unsigned overflow;
} histogram;

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long iterations = scale ? 100000000 * scale : 10000000;
    long bad = iterations / 100 * 85 + 12345;
    unsigned long long x = 42;
    unsigned *bucket = histogram.count;
    for (long i = 0; i < iterations; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned b = i == bad ? BUCKETS : (unsigned)(x >> 56); // the off-by-one, once
        bucket[b] += 1; /* CULPRIT */
    }
    unsigned long sum = 0;
    for (int b = 0; b < BUCKETS; b++)
        sum = sum * 31 + histogram.count[b];
    printf("%ld iterations: %lx, overflow %u\n", iterations, sum, histogram.overflow);
    return 0;
}
