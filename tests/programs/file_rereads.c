/* Reads one file over and over (read at the file position, pread at
 * offsets) and prints a checksum of every pass, while the file is changed
 * in between: by write(2) with its modification time put back afterwards
 * (same size, same mtime), then through a shared writable mapping. The
 * recorder refers repeated reads to its copy of the file; every change must
 * reach the trace all the same. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_BYTES (1024 * 1024)
#define CHUNK 4096

static char path[4096];

static uint64_t mix(uint64_t h, const unsigned char* p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static uint64_t sequential_pass(void)
{
    unsigned char buf[CHUNK];
    uint64_t h = 14695981039346656037ull;
    int fd = open(path, O_RDONLY);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        h = mix(h, buf, (size_t)n);
    close(fd);
    return h;
}

static uint64_t positional_pass(int fd)
{
    unsigned char buf[CHUNK];
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < 128; i++) {
        ssize_t n = pread(fd, buf, sizeof buf, (off_t)((i * 7919L * 8) % (FILE_BYTES - CHUNK)));
        h = mix(h, buf, n > 0 ? (size_t)n : 0);
    }
    return h;
}

/* More than the recorder lets pile up before it looks (8 MiB), through a
 * descriptor that stays open meanwhile. */
static void passes(const char* label)
{
    int fd = open(path, O_RDONLY);
    for (int i = 0; i < 10; i++) {
        uint64_t positional = positional_pass(fd);
        printf("%s %d: %016llx %016llx\n", label, i, (unsigned long long)sequential_pass(),
               (unsigned long long)positional);
    }
    close(fd);
}

int main(int argc, char** argv)
{
    snprintf(path, sizeof path, "%s/rereads.dat", argc > 1 ? argv[1] : "/tmp");
    static unsigned char data[FILE_BYTES];
    for (int i = 0; i < FILE_BYTES; i++)
        data[i] = (unsigned char)(i * 31 + (i >> 9));
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data)
        return 1;
    close(fd);
    passes("original");

    /* The same size and, put back, the same modification time. */
    struct stat before;
    stat(path, &before);
    fd = open(path, O_WRONLY);
    pwrite(fd, "rewritten", 9, 8192 * 8);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    futimens(fd, times);
    close(fd);
    passes("written");

    fd = open(path, O_RDWR);
    unsigned char* map = mmap(NULL, FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return 1;
    close(fd);
    memcpy(map + 800000, "through a mapping", 17);
    munmap(map, FILE_BYTES);
    passes("mapped");
    unlink(path);
    return 0;
}
