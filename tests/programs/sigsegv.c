/* Crash with SIGSEGV after some output. */
#include <stdio.h>

int main(void)
{
    printf("about to dereference a bad pointer\n");
    fflush(stdout);
    volatile int *p = (int *)16;
    *p = 1;
    return 0;
}
