/* Syscall-heavy: N tiny syscalls in a loop.
 *   syscalls N            getppid(): the cheapest syscall there is
 *   syscalls N FILE       pread() of 64 bytes: a small syscall that returns data
 *   syscalls N --wait     waitpid(-1, WNOHANG) with no child: a wait, which the
 *                         recorder stops at its entry (a recorded tracer's
 *                         waits report its tracees' stops) */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    long sum = 0;
    if (argc > 2 && strcmp(argv[2], "--wait") == 0) {
        for (long i = 0; i < n; i++)
            sum += waitpid(-1, NULL, WNOHANG);
    } else if (argc > 2) {
        int fd = open(argv[2], O_RDONLY);
        char buf[64];
        if (fd < 0)
            return 1;
        for (long i = 0; i < n; i++)
            sum += pread(fd, buf, sizeof buf, (i * 64) % 4096);
    } else {
        for (long i = 0; i < n; i++)
            sum += syscall(SYS_getppid);
    }
    printf("%d\n", sum != 0);
    return 0;
}
