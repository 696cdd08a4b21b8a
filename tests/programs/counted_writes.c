// Known writes between two syscalls, for the write level of rewind watch
// and the rw-count / rw-back tools: `hits` is written 1,000 times, once per
// round (HIT), then `mode` once (MODE); `table` is filled by one store
// instruction run 5,000 times (FILL), so the instruction before a write to
// its last elements is a hot one; `cur->n` (a pointer set before, and the
// field it points to) is written 300 times (REC); `pair.a` and `pair.b`
// in turn, 100 times each (PAIR-A, PAIR-B: their sum is 3k after round k).
#include <stdio.h>
#include <unistd.h>

static volatile long hits;
static volatile long mode;
static volatile long table[5000];
static struct rec {
    long n, spare;
} recs[2];
static struct rec* volatile cur;
static volatile struct {
    long a, b;
} pair;

int main(void)
{
    cur = &recs[1];
    (void)getppid();
    for (int i = 0; i < 1000; i++)
        hits = hits + 1; /* HIT */
    mode = 7;            /* MODE */
    for (int i = 0; i < 5000; i++)
        table[i] = i; /* FILL */
    for (int i = 0; i < 300; i++)
        cur->n += 2; /* REC */
    for (int i = 0; i < 100; i++) {
        pair.a += 1; /* PAIR-A */
        pair.b += 2; /* PAIR-B */
    }
    (void)getppid();
    printf("hits %ld, mode %ld, table[4999] %ld, n %ld, pair %ld\n", hits, mode, table[4999], cur->n, pair.a + pair.b);
    return 0;
}
