/* A process with a large resident set (argv[1] MiB, every page written),
 * then a few syscalls: snapshots are taken and restored around them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
    size_t size = mib << 20;
    char *p = malloc(size);
    if (!p)
        return 1;
    for (size_t i = 0; i < size; i += 4096)
        p[i] = (char)i;
    long sum = 0;
    for (int i = 0; i < 100; i++)
        sum += getppid() > 0;
    printf("%zu MiB resident, %ld\n", mib, sum + p[size / 2]);
    return 0;
}
