/* A program's own seccomp filters: prctl(PR_GET_SECCOMP) says 0 before
 * the program installs one and 2 after (whatever filter the recorder runs
 * the program under), SECCOMP_GET_NOTIF_SIZES fills its struct, a call the
 * filter refuses fails with its errno, a trapped call runs the SIGSYS
 * handler, or kills the process if SIGSYS is blocked (the kernel forces
 * it), and a killed call ends the process with SIGSYS. Replay installs
 * none of the program's filters: all of that comes from the trace. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
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
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getsid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof filter / sizeof filter[0], filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
        perror("seccomp");
        _exit(1);
    }
}

static void on_sigsys(int sig, siginfo_t* info, void* context)
{
    (void)sig;
    (void)context;
    char line[64];
    int n = snprintf(line, sizeof line, "SIGSYS handled: syscall %d\n", info->si_syscall);
    write(1, line, (size_t)n);
    _exit(6);
}

/* A child that installs the filter and does `what`; its end is printed. */
static void child(const char* what)
{
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigsys;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSYS, &sa, NULL);
        install();
        if (strcmp(what, "errno") == 0) {
            printf("mode after: %d\n", prctl(PR_GET_SECCOMP));
            long r = syscall(SYS_getpgrp);
            printf("getpgrp: %ld (%s)\n", r, r < 0 ? strerror(errno) : "no error");
            fflush(stdout);
        } else if (strcmp(what, "trap") == 0) {
            syscall(SYS_getppid);
        } else if (strcmp(what, "trap blocked") == 0) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGSYS);
            sigprocmask(SIG_BLOCK, &set, NULL);
            syscall(SYS_getppid);
        } else if (strcmp(what, "kill") == 0) {
            syscall(SYS_getsid, 0);
        }
        _exit(0);
    }
    int status;
    waitpid(p, &status, 0);
    if (WIFSIGNALED(status))
        printf("%s: killed by %s\n", what, strsignal(WTERMSIG(status)));
    else
        printf("%s: exit %d\n", what, WEXITSTATUS(status));
}

int main(void)
{
    struct {
        uint16_t notif, notif_resp, data;
    } sizes = {0, 0, 0};
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) == 0)
        printf("sizes: %u %u %u\n", sizes.notif, sizes.notif_resp, sizes.data);
    printf("mode before: %d\n", prctl(PR_GET_SECCOMP));
    child("errno");
    child("trap");
    child("trap blocked");
    child("kill");
    printf("mode in the parent: %d\n", prctl(PR_GET_SECCOMP));
    return 0;
}
