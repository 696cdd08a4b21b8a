/* Execs a seccomp filter keeps from running: execve raises SIGSYS (and
 * "returns" its own number, which the kernel leaves in rax), execveat
 * returns 0 as if it had succeeded. Neither replaces the image; the
 * program goes on after both. */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

extern char** environ;

static volatile int sigsys_count;
static volatile long sigsys_nr;

static void on_sigsys(int sig, siginfo_t* si, void* ctx)
{
    (void)sig;
    (void)ctx;
    sigsys_nr = si->si_syscall;
    sigsys_count++;
}

int main(int argc, char** argv)
{
    if (argc > 1) {
        printf("the vetoed exec ran after all\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, NULL);

    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        perror("seccomp");
        return 1;
    }
    char* args[] = {argv[0], "again", NULL};
    long ret = syscall(SYS_execve, "/proc/self/exe", args, environ);
    printf("execve returned %ld, %d SIGSYS for syscall %ld\n", ret, sigsys_count, sigsys_nr);
    ret = syscall(SYS_execveat, AT_FDCWD, "/proc/self/exe", args, environ, 0);
    printf("execveat returned %ld\n", ret);
    return 0;
}
