/* Exec of a file reachable only through a descriptor: the program binds a
 * copy of itself over a file in a tmpfs of its own mount namespace, opens
 * it, and unmounts both lazily before it execs the descriptor. The kernel
 * then shows the new image's file as "/" (the root of a mount attached
 * nowhere). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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
    /* Not mkdtemp: its getrandom calls vary in number from run to run, and
     * the test compares the counts of calls with strace's. */
    char dir[64];
    char file[sizeof dir + 8];
    snprintf(dir, sizeof dir, "/tmp/exec_detached-%d", (int)getpid());
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 || mkdir(dir, 0700) != 0) {
        perror("a mount namespace of its own");
        return 1;
    }
    snprintf(file, sizeof file, "%s/image", dir);
    if (mount("none", dir, "tmpfs", 0, NULL) != 0 || close(open(file, O_CREAT | O_WRONLY, 0700)) != 0 ||
        mount(self, file, NULL, MS_BIND, NULL) != 0) {
        perror("mount");
        return 1;
    }
    int fd = open(file, O_PATH | O_CLOEXEC);
    umount2(file, MNT_DETACH);
    umount2(dir, MNT_DETACH);
    rmdir(dir);
    char* args[] = {argv[0], "detached", NULL};
    syscall(SYS_execveat, fd, "", args, environ, AT_EMPTY_PATH);
    perror("execveat");
    return 1;
}
