/* Execs that go through a file descriptor: fexecve (execveat of the
 * descriptor itself), execveat relative to a directory descriptor, and
 * execve of /proc/self/fd/N and /dev/fd/N. The kernel names the new image
 * after the descriptor (AT_EXECFN "/dev/fd/N"...), so a replay must exec
 * through the same descriptor number. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv)
{
    int stage = argc > 1 ? atoi(argv[1]) : 0;
    printf("stage %d started as %s\n", stage, (const char*)getauxval(AT_EXECFN));
    fflush(stdout);
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return 1;
    self[n] = 0;
    char next[16];
    snprintf(next, sizeof next, "%d", stage + 1);
    char* args[] = {argv[0], next, NULL};
    char path[64];
    switch (stage) {
    case 0: {
        int fd = open(self, O_RDONLY | O_CLOEXEC);
        fexecve(fd, args, environ);
        break;
    }
    case 1: {
        char dir[PATH_MAX];
        strcpy(dir, self);
        int dirfd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);
        syscall(SYS_execveat, dirfd, basename(self), args, environ, 0);
        break;
    }
    case 2: {
        int fd = open(self, O_RDONLY);
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        execve(path, args, environ);
        break;
    }
    case 3: {
        int fd = open(self, O_PATH | O_CLOEXEC);
        snprintf(path, sizeof path, "/dev/fd/%d", fd);
        execve(path, args, environ);
        break;
    }
    default:
        return 0;
    }
    perror("exec");
    return 1;
}
