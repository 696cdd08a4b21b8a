/* Writes into its own memory through /proc/self/mem (pwrite at an address,
 * and write at the file position): the kernel changes the process's
 * memory, which replay must change too, even in a read-only page. */
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
    close(fd);
    return 0;
}
