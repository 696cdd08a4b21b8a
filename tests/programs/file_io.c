/* Create, write, read back (read, pread, readv), seek, truncate, delete. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/file_io.dat", argc > 1 ? argv[1] : "/tmp");
    int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
    if (fd < 0)
        return 1;
    const char *lines[] = {"alpha\n", "beta\n", "gamma\n"};
    for (int i = 0; i < 3; i++)
        write(fd, lines[i], strlen(lines[i]));
    char buf[64] = {0};
    lseek(fd, 0, SEEK_SET);
    ssize_t n = read(fd, buf, sizeof buf - 1);
    printf("read %zd: %s", n, buf);
    memset(buf, 0, sizeof buf);
    n = pread(fd, buf, 4, 6);
    printf("pread %zd: %s\n", n, buf);
    char a[3] = {0}, b[5] = {0};
    struct iovec iov[2] = {{a, 2}, {b, 4}};
    lseek(fd, 0, SEEK_SET);
    n = readv(fd, iov, 2);
    printf("readv %zd: %.2s|%.4s\n", n, a, b);
    ftruncate(fd, 5);
    printf("size after truncate %ld\n", (long)lseek(fd, 0, SEEK_END));
    close(fd);
    unlink(path);
    printf("exists after unlink: %s\n", access(path, F_OK) == 0 ? "yes" : "no");
    return 0;
}
