/* A program's own seccomp filters: prctl(PR_GET_SECCOMP) says 0 before
 * the program installs one and 2 after (whatever filter the recorder runs
 * the program under), SECCOMP_GET_NOTIF_SIZES fills its struct, and a call
 * the filter refuses fails with its errno. Replay installs none of the
 * program's filters: all of that comes from the trace. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void install(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpgrp, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        perror("seccomp");
        _exit(1);
    }
}

int main(void)
{
    struct {
        uint16_t notif, notif_resp, data;
    } sizes = {0, 0, 0};
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0)
        printf("sizes: %u %u %u\n", sizes.notif, sizes.notif_resp, sizes.data);
    printf("mode before: %d\n", prctl(PR_GET_SECCOMP));
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        install();
        printf("mode after: %d\n", prctl(PR_GET_SECCOMP));
        long r = syscall(SYS_getpgrp);
        printf("getpgrp: %ld (%s)\n", r, r < 0 ? strerror(errno) : "no error");
        return 0;
    }
    int status;
    waitpid(child, &status, 0);
    if (WIFSIGNALED(status))
        printf("the child was killed by %s\n", strsignal(WTERMSIG(status)));
    else
        printf("the child exited with %d\n", WEXITSTATUS(status));
    printf("mode in the parent: %d\n", prctl(PR_GET_SECCOMP));
    return 0;
}
