/* mmap a file and checksum it through the mapping. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int fd = open(argc > 1 ? argv[1] : "/etc/passwd", O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0)
        return 1;
    const unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return 1;
    unsigned long long sum = 0;
    for (off_t i = 0; i < st.st_size; i++)
        sum = sum * 131 + p[i];
    printf("mapped %ld bytes, sum %016llx\n", (long)st.st_size, sum);
    munmap((void *)p, (size_t)st.st_size);
    return 0;
}
