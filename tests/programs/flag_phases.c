// A flag whose last change is in the middle of the run, or at its first
// step. `flag_phases middle`: 100,000 flips (a getppid every 999), the last
// one with i == 99999 (FLIP), then as long again of work in which the flag
// stays 0, as it was at the start. `flag_phases first`: set once by main's
// first statement (FIRST), then the same work.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int flag;

static unsigned long work(unsigned long seed)
{
    for (int round = 0; round < 100; round++) {
        for (int k = 0; k < 20000; k++)
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        (void)getppid(); // an event now and then
    }
    return seed;
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "first") == 0) {
        flag = 1; /* FIRST */
        printf("%lx\n", work(1));
        return 0;
    }
    for (int i = 0; i < 100000; i++) {
        flag ^= 1; /* FLIP */
        if (i % 999 == 0)
            (void)getppid();
    }
    printf("%lx\n", work(1));
    return 0;
}
