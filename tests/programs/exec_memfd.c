/* fexecve of a memfd holding a copy of the program: the new image's file
 * exists nowhere on disk ("/memfd:NAME (deleted)" in /proc/self/maps). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return 1;
    self[n] = 0;
    if (argc > 1) {
        printf("started as %s from %s\n", (const char*)getauxval(AT_EXECFN), self);
        return 0;
    }
    int in = open(self, O_RDONLY | O_CLOEXEC);
    int memfd = memfd_create("exec_memfd image", MFD_CLOEXEC);
    char buf[65536];
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(memfd, buf, n) != n)
            return 1;
    char* args[] = {argv[0], "copy", NULL};
    fexecve(memfd, args, environ);
    perror("fexecve");
    return 1;
}
