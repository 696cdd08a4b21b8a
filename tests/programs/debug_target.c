// A small program for debugger tests: a global that changes at known lines,
// nested calls to step into and out of, a function gdb can call, calls into
// the C library (breakpoints in shared libraries), and a syscall in every
// iteration so that events spread over the whole run.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ITERATIONS 100

long counter = 0;
long checksum = 0;

long square(long x)
{
    return x * x;
}

long add_square(long acc, long x)
{
    long s = square(x);
    return acc + s;
}

void bump(long by)
{
    counter += by; // bump-line
}

int main(void)
{
    char label[32];
    for (long i = 1; i <= ITERATIONS; i++) {
        checksum = add_square(checksum, i); // call-line
        bump(i);                            // bump-call-line
        if (getppid() < 0)
            abort();
        if (i % 25 == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            snprintf(label, sizeof label, "step %ld", i);
            printf("%s: counter=%ld checksum=%ld\n", label, counter, checksum);
        }
    }
    counter = -1; // final-line
    printf("done: %zu\n", strlen(label));
    return 0;
}
