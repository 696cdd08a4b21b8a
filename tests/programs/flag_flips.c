// A flag that goes up, down, and up again: "flag == 1" at the end changed
// to 1 twice, at EARLY-SET (20 % of the run) and at LAST-SET (92 %), and is
// 1 in the middle of the run too. The change asked for is the last one
// before the end. A bisection from the start that probes the middle first
// finds the early one.
#include <stdio.h>
#include <unistd.h>

static volatile int flag;

static unsigned long work(unsigned long seed)
{
    for (unsigned long i = 0; i < 400000; i++) // about a millisecond
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
    return seed;
}

int main(void)
{
    unsigned long seed = 1;
    for (int round = 0; round < 200; round++) {
        if (round == 40)
            flag = 1; /* EARLY-SET */
        if (round == 150)
            flag = 0; /* CLEAR */
        if (round == 184)
            flag = 1; /* LAST-SET */
        seed = work(seed);
        (void)getppid(); // an event per round: the recorded time moves with the rounds
    }
    printf("%lx\n", seed);
    return 0;
}
