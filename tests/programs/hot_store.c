/* A store in a tight loop that writes the watched word once among
 * tens of thousands of writes to its neighbours: stepping back from that write
 * passes every earlier execution of the store.
 *
 *   hot_store [ITERATIONS]    (default 100,000) */
#include <stdio.h>
#include <stdlib.h>

struct {
    unsigned count[64];
    unsigned spill; /* the watched word: count[64], once */
} table;

int main(int argc, char** argv)
{
    long iterations = argc > 1 ? atol(argv[1]) : 100000;
    long bad = iterations / 10 * 7 + 321;
    unsigned long long x = 7;
    unsigned* slot = table.count;
    for (long i = 0; i < iterations; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        unsigned b = i == bad ? 64 : (unsigned)(x >> 58);
        slot[b] += 1; /* HOT STORE */
    }
    unsigned long sum = 0;
    for (int b = 0; b < 64; b++)
        sum = sum * 31 + table.count[b];
    printf("%lx %u\n", sum, table.spill);
    return 0;
}
