// watch: totals.guard != 0
//
// Many descents of a deep recursion (2,000 frames each), each adding what
// it gathered on the way down to one of 64 totals at the bottom. One late
// descent computes its slot one past the end and overwrites the guard word
// that follows the totals. The store is at the bottom of the recursion,
// among millions of calls that look the same.
//
//   watch_deep_recursion N    N scales the number of descents (0: tiny)
#include <stdio.h>
#include <stdlib.h>

#define DEPTH 2000
#define SLOTS 64

struct {
    unsigned long slot[SLOTS];
    unsigned long guard;
} totals;

static long bad_descent;

static unsigned long descend(long descent, int depth, unsigned long acc)
{
    acc = acc * 31 + (unsigned long)depth;
    if (depth == DEPTH) {
        // Off by one for one descent: SLOTS is one past the last slot.
        unsigned slot = descent == bad_descent ? SLOTS : (unsigned)(descent % SLOTS);
        unsigned long *cell = &totals.slot[0] + slot;
        *cell += acc | 1; /* CULPRIT */
        return acc & 0xff;
    }
    // Not a tail call: every frame stays on the stack until the bottom returns.
    return descend(descent, depth + 1, acc) + (acc & 1);
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long descents = scale ? 20000 * scale : 2000;
    bad_descent = descents / 100 * 85;
    unsigned long back = 0;
    for (long d = 0; d < descents; d++)
        back += descend(d, 0, (unsigned long)d);
    unsigned long sum = 0;
    for (int i = 0; i < SLOTS; i++)
        sum ^= totals.slot[i];
    printf("%ld descents of %d: %lx %lx guard %s\n", descents, DEPTH, back, sum, totals.guard ? "broken" : "intact");
    return 0;
}
