// Syscalls that fail, for `rewind dump --errors`: seven opens of files that
// do not exist (ENOENT) and three closes of a descriptor that is not open
// (EBADF); it prints how many of each it saw fail.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(void)
{
    int enoent = 0, ebadf = 0;
    char path[64];
    for (int i = 0; i < 7; i++) {
        snprintf(path, sizeof path, "/nonexistent-rewind-%d", i);
        if (open(path, O_RDONLY) < 0 && errno == ENOENT)
            enoent++;
    }
    for (int i = 0; i < 3; i++)
        if (close(1000 + i) < 0 && errno == EBADF)
            ebadf++;
    printf("ENOENT %d EBADF %d\n", enoent, ebadf);
    return 0;
}
