/* Writes a line every 10 ms until killed: a recording to interrupt. */
#include <stdio.h>
#include <time.h>

int main(void)
{
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (long i = 0;; i++) {
        printf("tick %ld\n", i);
        fflush(stdout);
        nanosleep(&ts, NULL);
    }
}
