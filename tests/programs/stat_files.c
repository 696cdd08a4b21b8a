/* stat, lstat, fstat, fstatat and statx on a file and a symlink. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char file[4096], link[4096];
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    snprintf(file, sizeof file, "%s/stat.dat", dir);
    snprintf(link, sizeof link, "%s/stat.lnk", dir);
    int fd = open(file, O_CREAT | O_TRUNC | O_WRONLY, 0640);
    write(fd, "0123456789", 10);
    unlink(link);
    symlink("stat.dat", link);
    struct stat st;
    stat(file, &st);
    printf("stat size %ld mode %o\n", (long)st.st_size, st.st_mode & 07777);
    lstat(link, &st);
    printf("lstat is link %d\n", S_ISLNK(st.st_mode));
    fstat(fd, &st);
    printf("fstat size %ld\n", (long)st.st_size);
    fstatat(AT_FDCWD, link, &st, 0);
    printf("fstatat follows %d\n", S_ISREG(st.st_mode));
    struct statx sx;
    statx(AT_FDCWD, file, 0, STATX_SIZE | STATX_MODE, &sx);
    printf("statx size %llu\n", (unsigned long long)sx.stx_size);
    printf("stat missing: %d\n", stat("/nonexistent/x", &st));
    close(fd);
    unlink(link);
    unlink(file);
    return 0;
}
