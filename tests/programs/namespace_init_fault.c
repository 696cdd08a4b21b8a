/* Faults in the init of a new PID namespace. Not caught, or blocked, a
 * fault kills an init as any process (the kernel makes the init killable
 * for it); caught, its handler runs. Traced, the kernel keeps an init
 * unkillable, so a recorder that passed the signal on would see the
 * instruction fault again for ever. Needs CAP_SYS_ADMIN (exit 77). */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int* volatile nowhere;

static void on_segv(int sig)
{
    (void)sig;
    _exit(getpid() == 1 ? 41 : 1);
}

/* The first process of a new namespace, made by fork after unshare: it
 * faults as `how` says. */
static void init_faults(const char* how)
{
    if (unshare(CLONE_NEWPID) != 0) {
        printf("cannot make a PID namespace: %s\n", strerror(errno));
        _exit(77);
    }
    pid_t init = fork();
    if (init == 0) {
        if (strcmp(how, "caught") == 0) {
            signal(SIGSEGV, on_segv);
        } else if (strcmp(how, "blocked") == 0) {
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGSEGV);
            sigprocmask(SIG_BLOCK, &set, NULL);
        }
        *nowhere = 1;
        _exit(2);
    }
    int status;
    waitpid(init, &status, 0);
    if (WIFSIGNALED(status))
        printf("%s: the namespace's init was killed by %s\n", how, strsignal(WTERMSIG(status)));
    else
        printf("%s: the namespace's init exited with status %d\n", how, WEXITSTATUS(status));
    fflush(stdout);
    _exit(0);
}

int main(void)
{
    const char* hows[] = {"uncaught", "blocked", "caught"};
    for (int i = 0; i < 3; i++) {
        /* Each in a process of its own: a process makes one PID namespace
         * for its children. */
        pid_t p = fork();
        if (p == 0)
            init_faults(hows[i]);
        int status;
        waitpid(p, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
            return 77;
    }
    return 0;
}
