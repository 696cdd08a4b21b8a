/* A loop whose rounds each call a function that computes for well under a
 * microsecond: an anchor a millisecond into the loop lies a few thousand
 * rounds in, where a label names it by the return into the loop.
 *
 *   label_loop [ROUNDS]    (default 20000) */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned long round_of(unsigned long x)
{
    for (int i = 0; i < 300; i++)
        x = x * 6364136223846793005ul + 1442695040888963407ul;
    return x;
}

int main(int argc, char** argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    unsigned long x = 1;
    for (long r = 0; r < rounds; r++)
        x = round_of(x) ^ (unsigned long)r;
    printf("%lx\n", x);
    return 0;
}
