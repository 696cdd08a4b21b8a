/* Traces a child of its own, as a debugger or strace does. argv[1] says how:
 *  traceme (default)  the child calls PTRACE_TRACEME and stops itself with
 *                     SIGSTOP; the parent waits for that stop, then lets
 *                     it go on with PTRACE_CONT (natively; were the
 *                     child traced by someone else, the parent would wait
 *                     for ever);
 *  attach             the parent attaches to a sleeping child
 *                     (PTRACE_ATTACH) and waits for its stop;
 *  thread             as attach, from a second thread of the parent;
 *  vfork              the child of a vfork calls PTRACE_TRACEME before it
 *                     execs `true`, and stops at its exec;
 *  poke               as traceme; while the child is stopped, the parent
 *                     reads a word of its memory (PTRACE_PEEKDATA), changes
 *                     it (PTRACE_POKEDATA) and changes a register the child
 *                     then prints (PTRACE_SETREGS), and the child prints
 *                     what it sees;
 *  syscall            as traceme, then the parent asks for the child's
 *                     next syscall stop (PTRACE_SYSCALL);
 *  sysemu             the same with PTRACE_SYSEMU (the stop's syscall is
 *                     skipped);
 *  interrupted        the parent seizes its grandchild (no child of its own:
 *                     the kernel fails a wait for it at once when it is not
 *                     traced) and waits for it; SIGALRM, whose handler does
 *                     not restart calls, interrupts the wait;
 *  forks              the parent seizes its child with PTRACE_O_TRACEFORK
 *                     and PTRACE_O_TRACECLONE; the child forks a grandchild
 *                     and starts a thread: the parent sees the fork and
 *                     clone stops, the new tasks' first stops (it traces
 *                     them from their birth), and the grandchild's and the
 *                     thread's ends (it is not their parent);
 *  seize_stopped      the child stops itself (SIGSTOP) and the parent sees
 *                     the stop before it seizes the child (PTRACE_SEIZE):
 *                     its wait then reports the group stop again, as the
 *                     tracer's; SIGCONT ends it;
 *  seccomp            no child: a seccomp filter hands getppid to a tracer
 *                     (SECCOMP_RET_TRACE), which fails with ENOSYS when
 *                     there is none.
 * It prints what the parent saw. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

static void report(const char* how, pid_t child, int status)
{
    if (WIFSTOPPED(status))
        printf("%s: child stopped by signal %d\n", how, WSTOPSIG(status));
    else
        printf("%s: child not stopped (status 0x%x)\n", how, status);
    fflush(stdout);
    ptrace(PTRACE_CONT, child, NULL, NULL);
}

/* A child that asks to be traced and stops itself; returns when it has
 * stopped, its stop in *status. */
static pid_t stopped_tracee(int* status)
{
    pid_t child = fork();
    if (child == 0) {
        /* Unchecked, as many programs do: the stop below is for the
         * parent's waitpid either way. */
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        raise(SIGSTOP);
        _exit(0);
    }
    waitpid(child, status, 0);
    return child;
}

static int traceme(void)
{
    int status = 0;
    pid_t child = stopped_tracee(&status);
    report("traceme", child, status);
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static volatile long shared_word = 1;

/* The child stops with SIGSTOP in a raw tgkill, whose result register the
 * parent rewrites: the child prints the word and the result it got. */
static int poke(void)
{
    pid_t child = fork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        long got = syscall(SYS_tgkill, getpid(), getpid(), SIGSTOP);
        printf("child sees the word %ld and tgkill's result %ld\n", shared_word, got);
        fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    errno = 0;
    long word = ptrace(PTRACE_PEEKDATA, child, (void*)&shared_word, NULL);
    printf("poke: child stopped by signal %d; its word reads %ld (%s)\n", WSTOPSIG(status), word,
           errno ? strerror(errno) : "no error");
    fflush(stdout);
    ptrace(PTRACE_POKEDATA, child, (void*)&shared_word, (void*)42);
    struct user_regs_struct regs;
    ptrace(PTRACE_GETREGS, child, NULL, &regs);
    regs.rax = 7;
    ptrace(PTRACE_SETREGS, child, NULL, &regs);
    ptrace(PTRACE_CONT, child, NULL, NULL);
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int syscall_stops(const char* how, enum __ptrace_request request)
{
    int status = 0;
    pid_t child = stopped_tracee(&status);
    ptrace(request, child, NULL, NULL);
    waitpid(child, &status, 0);
    printf("%s: child stopped by signal %d\n", how, WSTOPSIG(status));
    fflush(stdout);
    ptrace(PTRACE_CONT, child, NULL, NULL);
    waitpid(child, &status, 0);
    return 0;
}

static void on_alarm(int sig)
{
    (void)sig;
}

static int interrupted_wait(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        pid_t grandchild = fork();
        if (grandchild == 0) {
            pause();
            _exit(0);
        }
        write(fds[1], &grandchild, sizeof grandchild);
        pause();
        _exit(0);
    }
    pid_t grandchild = 0;
    if (read(fds[0], &grandchild, sizeof grandchild) != sizeof grandchild)
        return 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART */
    sigaction(SIGALRM, &sa, NULL);
    if (ptrace(PTRACE_SEIZE, grandchild, NULL, NULL) != 0) {
        printf("interrupted: PTRACE_SEIZE failed: %s\n", strerror(errno));
        return 1;
    }
    alarm(1);
    int status = 0;
    pid_t got = waitpid(grandchild, &status, __WALL);
    printf("interrupted: waitpid gave %d (%s)\n", (int)got, got < 0 ? strerror(errno) : "no error");
    fflush(stdout);
    kill(grandchild, SIGKILL);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    return 0;
}

static pid_t sleeper;

static void* attach(void* how)
{
    if (ptrace(PTRACE_ATTACH, sleeper, NULL, NULL) != 0) {
        printf("%s: PTRACE_ATTACH failed: %s\n", (const char*)how, strerror(errno));
        return NULL;
    }
    int status = 0;
    waitpid(sleeper, &status, __WALL);
    report(how, sleeper, status);
    return NULL;
}

static int attach_to_sleeper(int from_thread)
{
    sleeper = fork();
    if (sleeper == 0) {
        sleep(1000);
        _exit(0);
    }
    if (from_thread) {
        pthread_t t;
        pthread_create(&t, NULL, attach, "thread");
        pthread_join(t, NULL);
    } else {
        attach("attach");
    }
    kill(sleeper, SIGKILL);
    waitpid(sleeper, NULL, __WALL);
    return 0;
}

static int seize_stopped(void)
{
    pid_t child = fork();
    if (child == 0) {
        raise(SIGSTOP);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, WUNTRACED);
    if (ptrace(PTRACE_SEIZE, child, NULL, NULL) != 0) {
        perror("PTRACE_SEIZE");
        return 1;
    }
    waitpid(child, &status, 0);
    printf("seize_stopped: %s stop, signal %d\n", status >> 16 == PTRACE_EVENT_STOP ? "a group" : "another",
           WIFSTOPPED(status) ? WSTOPSIG(status) : -1);
    fflush(stdout);
    kill(child, SIGCONT);
    ptrace(PTRACE_DETACH, child, NULL, NULL);
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int vforked(void)
{
    pid_t child = vfork();
    if (child == 0) {
        ptrace(PTRACE_TRACEME, 0, NULL, NULL);
        execl("/bin/true", "true", (char*)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(child, &status, 0);
    report("vfork", child, status);
    waitpid(child, &status, 0);
    return 0;
}

static int wants_a_tracer(void)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        return 1;
    }
    long ppid = syscall(SYS_getppid);
    printf("seccomp: getppid gave %ld (%s)\n", ppid, ppid < 0 ? strerror(errno) : "no error");
    return 0;
}

static void* short_thread(void* arg)
{
    return arg;
}

/* One stop of a traced task, printed as the tracer sees it. */
static pid_t traced_stop(const char* what, pid_t pid, int flags)
{
    int status = 0;
    pid_t got = waitpid(pid, &status, flags);
    if (WIFSTOPPED(status))
        printf("forks: %s stopped by signal %d, event %d\n", what, WSTOPSIG(status), status >> 16);
    else if (WIFEXITED(status))
        printf("forks: %s exited with %d\n", what, WEXITSTATUS(status));
    else
        printf("forks: %s: status 0x%x\n", what, status);
    fflush(stdout);
    return got;
}

static int traced_forks(void)
{
    int go[2];
    if (pipe(go) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        pid_t grandchild = fork();
        if (grandchild == 0)
            _exit(66);
        int status;
        waitpid(grandchild, &status, 0);
        pthread_t t;
        pthread_create(&t, NULL, short_thread, NULL);
        pthread_join(t, NULL);
        _exit(WIFEXITED(status) ? WEXITSTATUS(status) + 1 : 1);
    }
    if (ptrace(PTRACE_SEIZE, child, NULL, (void*)(PTRACE_O_TRACEFORK | PTRACE_O_TRACECLONE)) != 0) {
        perror("PTRACE_SEIZE");
        return 1;
    }
    if (write(go[1], "g", 1) != 1)
        return 1;
    unsigned long born = 0;
    traced_stop("child", child, 0); /* the fork */
    ptrace(PTRACE_GETEVENTMSG, child, NULL, &born);
    traced_stop("grandchild", (pid_t)born, 0); /* its first stop */
    ptrace(PTRACE_CONT, (pid_t)born, NULL, NULL);
    traced_stop("grandchild", (pid_t)born, 0); /* its end */
    ptrace(PTRACE_CONT, child, NULL, NULL);
    traced_stop("child", child, 0); /* SIGCHLD of the grandchild's end */
    ptrace(PTRACE_CONT, child, NULL, NULL);
    traced_stop("child", child, 0); /* the clone */
    ptrace(PTRACE_GETEVENTMSG, child, NULL, &born);
    traced_stop("thread", (pid_t)born, __WALL);
    ptrace(PTRACE_CONT, (pid_t)born, NULL, NULL);
    traced_stop("thread", (pid_t)born, __WALL);
    ptrace(PTRACE_CONT, child, NULL, NULL);
    traced_stop("child", child, 0);
    return 0;
}

int main(int argc, char** argv)
{
    const char* how = argc > 1 ? argv[1] : "traceme";
    printf("tracing a child (%s)\n", how);
    fflush(stdout);
    if (strcmp(how, "attach") == 0)
        return attach_to_sleeper(0);
    if (strcmp(how, "thread") == 0)
        return attach_to_sleeper(1);
    if (strcmp(how, "vfork") == 0)
        return vforked();
    if (strcmp(how, "seccomp") == 0)
        return wants_a_tracer();
    if (strcmp(how, "poke") == 0)
        return poke();
    if (strcmp(how, "forks") == 0)
        return traced_forks();
    if (strcmp(how, "interrupted") == 0)
        return interrupted_wait();
    if (strcmp(how, "syscall") == 0)
        return syscall_stops(how, PTRACE_SYSCALL);
    if (strcmp(how, "sysemu") == 0)
        return syscall_stops(how, PTRACE_SYSEMU);
    if (strcmp(how, "seize_stopped") == 0)
        return seize_stopped();
    return traceme();
}
