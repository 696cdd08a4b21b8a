/* A process that lowers its own data size limit, then grows its heap with
 * brk until the kernel refuses: replay runs brk for real, so it must have
 * the same limit, or the heap grows further than it did. */
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int main(void)
{
    struct rlimit limit;
    getrlimit(RLIMIT_DATA, &limit);
    limit.rlim_cur = 8 << 20;
    if (setrlimit(RLIMIT_DATA, &limit) != 0)
        return 2;
    uintptr_t start = (uintptr_t)sbrk(0);
    unsigned grown = 0;
    while (sbrk(1 << 20) != (void*)-1 && grown < 1024)
        grown++;
    printf("the heap grew by %s MiB before the limit stopped it (%s)\n", grown < 16 ? "under 16" : "16 or more",
           grown < 1024 ? "stopped" : "not stopped");
    return start == 0;
}
