// A program shape for rewind calls and rewind writes: OTHER calls of a
// function nobody asks about, TARGET calls of the one asked about (each
// also writing a global), and a syscall every 100,000 calls, so that the
// recording has stretches of all lengths.
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

long counted; // written by each call of target()

__attribute__((noinline)) long other(long i)
{
    return (i ^ (i >> 3)) + 1;
}

__attribute__((noinline)) long target(long i, const char* label)
{
    counted += i + (label[0] == 't');
    return counted & 0xffff;
}

int main(int argc, char** argv)
{
    long others = argc > 1 ? atol(argv[1]) : 1000000;
    long targets = argc > 2 ? atol(argv[2]) : 1000;
    long every = targets ? others / targets : others + 1, sink = 0, returned = 0;
    for (long i = 0; i < others; i++) {
        sink += other(i);
        if (every && i % every == 0)
            returned += target(i, "target");
        if (i % 100000 == 0)
            getppid();
    }
    printf("other=%ld target=%ld sink=%ld returned=%ld\n", others, targets, sink, returned);
    return 0;
}
