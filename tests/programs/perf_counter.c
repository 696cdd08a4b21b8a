/* A software performance counter of the program's own: opened, enabled,
 * disabled, reset and read back, its id asked for; perf_event_open with a
 * struct too large for the kernel, which then writes the size it knows
 * into it. Replay serves all of it from the trace. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static int perf_open(struct perf_event_attr* attr)
{
    return (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, 0);
}

int main(void)
{
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.disabled = 1;
    int fd = perf_open(&attr);
    if (fd < 0) {
        printf("SKIP: no software perf counter here: %s\n", strerror(errno));
        return 77;
    }
    ioctl(fd, PERF_EVENT_IOC_RESET, 0);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    volatile uint64_t spin = 0;
    for (int i = 0; i < 2000000; i++)
        spin += (uint64_t)i;
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t count = 0;
    ssize_t n = read(fd, &count, sizeof count);
    printf("read %zd bytes: the task clock %s\n", n, count > 0 ? "ran" : "did not run");
    uint64_t id = 0;
    int r = ioctl(fd, PERF_EVENT_IOC_ID, &id);
    printf("id: %d, %s\n", r, id ? "set" : "unset");
    close(fd);

    // Larger than any kernel's struct, with a non-zero byte past it: E2BIG,
    // and the kernel's size written into the struct.
    static unsigned char big[2048];
    struct perf_event_attr* a = (struct perf_event_attr*)big;
    a->type = PERF_TYPE_SOFTWARE;
    a->config = PERF_COUNT_SW_TASK_CLOCK;
    a->size = sizeof big;
    big[sizeof big - 1] = 1;
    fd = perf_open(a);
    printf("oversized: %d (%s), size now %s\n", fd, fd < 0 ? strerror(errno) : "?",
           a->size != sizeof big ? "the kernel's" : "unchanged");
    return 0;
}
