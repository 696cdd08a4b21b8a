/* Writes into its own memory through /proc/self/mem (pwrite at an address,
 * and write at the file position): the kernel changes the process's
 * memory, which replay must change too, even in a read-only page. The last
 * write is 2 MiB, more than a 1 MiB ring holds (rewind record --ring-mib
 * 1 leaves it to the supervisor). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
    int fd = open("/proc/self/mem", O_RDWR);
    if (fd < 0)
        return 1;
    volatile uint64_t on_stack = 0;
    uint64_t value = 0x1122334455667788ull;
    if (pwrite(fd, &value, sizeof value, (off_t)(uintptr_t)&on_stack) != (ssize_t)sizeof value)
        return 1;
    printf("on the stack: %#llx\n", (unsigned long long)on_stack);

    char* page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED || lseek(fd, (off_t)(uintptr_t)(page + 100), SEEK_SET) < 0)
        return 1;
    const char text[] = "written through /proc/self/mem";
    if (write(fd, text, sizeof text) != (ssize_t)sizeof text)
        return 1;
    printf("in a read-only page: %s\n", page + 100);

    enum { kBig = 2 << 20 };
    static unsigned char from[kBig];
    unsigned char* to = mmap(NULL, kBig, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    for (int i = 0; i < kBig; i++)
        from[i] = (unsigned char)(i * 7 + (i >> 11));
    if (to == MAP_FAILED || pwrite(fd, from, kBig, (off_t)(uintptr_t)to) != kBig)
        return 1;
    uint64_t sum = 0;
    for (int i = 0; i < kBig; i++)
        sum = sum * 31 + to[i];
    printf("2 MiB written, checksum %016llx\n", (unsigned long long)sum);
    close(fd);
    return 0;
}
