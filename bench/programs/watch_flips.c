// watch: state == 0
//
// A value that comes and goes: `state` holds the open session's number, 0
// when none is open. Sessions open and close 100,000 x N times in a loop of
// pure computation (a third stay open into the next round), with a system
// call every 1,000 rounds; after the loop the last session is closed, and
// `state == 0` at the end is what it was at the start. The change asked for
// is the last one: that close (CULPRIT), not any of the thousands before.
//
//   watch_flips N    N scales the number of rounds (0: tiny)
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long state;

static __attribute__((noinline)) void open_session(long id)
{
    state = id;
}

static __attribute__((noinline)) void close_session(void)
{
    state = 0;
}

int main(int argc, char** argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long rounds = scale ? 100000 * scale : 3000;
    unsigned long long x = 7, sum = 0;
    for (long r = 0; r < rounds; r++) {
        if (state == 0)
            open_session(r + 1);
        for (int k = 0; k < 200; k++) { // the session's work
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            sum += x >> 60;
        }
        if ((x >> 62) != 0 && r != rounds - 1)
            close_session();
        if (r % 1000 == 999)
            (void)getppid(); // an event now and then
    }
    state = 0; /* CULPRIT */
    printf("%ld rounds: %llx\n", rounds, sum);
    return 0;
}
