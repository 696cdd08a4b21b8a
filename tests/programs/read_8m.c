/* One read(2) of 8 MiB, then a checksum of what came back. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    size_t size = 8u << 20;
    unsigned char *buf = malloc(size);
    int fd = open(argc > 1 ? argv[1] : "/dev/zero", O_RDONLY);
    if (!buf || fd < 0)
        return 1;
    ssize_t n = read(fd, buf, size);
    unsigned long long sum = 1469598103934665603ull;
    for (ssize_t i = 0; i < n; i++)
        sum = (sum ^ buf[i]) * 1099511628211ull;
    printf("read %zd bytes, fnv1a %016llx\n", n, sum);
    return 0;
}
