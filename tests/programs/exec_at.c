/* execveat by path: absolute, then relative to the working directory. Each
 * image prints what the kernel told it it was started as (AT_EXECFN). */
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
    switch (stage) {
    case 0:
        syscall(SYS_execveat, AT_FDCWD, self, args, environ, 0);
        break;
    case 1: {
        char name[PATH_MAX + 2] = "./";
        strcat(name, basename(self));
        chdir(dirname(self));
        syscall(SYS_execveat, AT_FDCWD, name, args, environ, 0);
        break;
    }
    default:
        return 0;
    }
    perror("execveat");
    return 1;
}
