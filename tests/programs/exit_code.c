/* A non-zero exit status. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    printf("exiting with 42\n");
    exit(42);
}
