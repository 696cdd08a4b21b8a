/* 16 bytes of /dev/urandom printed in hex. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    unsigned char buf[16];
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, buf, sizeof buf) != sizeof buf)
        return 1;
    close(fd);
    for (size_t i = 0; i < sizeof buf; i++)
        printf("%02x", buf[i]);
    printf("\n");
    return 0;
}
