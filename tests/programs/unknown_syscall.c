/* Syscalls rewind's table does not describe, all of which fail: a number no
 * kernel defines (600, and -1, which the kernel's exit of rt_sigreturn
 * resembles), an fcntl command and a terminal ioctl no kernel defines. A
 * call that failed changed nothing, so each replays with its result; a
 * signal handler's rt_sigreturn between them stays an rt_sigreturn. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile sig_atomic_t handled;

static void on_usr1(int sig)
{
    handled = sig;
}

int main(void)
{
    long none = syscall(600, 1, 2, 3);
    int none_errno = errno;
    long minus_one = syscall(-1, 4, 5, 6);
    int minus_one_errno = errno;
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    int unknown_fcntl = fcntl(1, 9999);
    int unknown_ioctl = ioctl(0, 0x5499, 0);
    printf("syscall 600 = %ld (errno %d), syscall -1 = %ld (errno %d), handler %d, fcntl 9999 %s, ioctl 0x5499 %s\n",
           none, none_errno, minus_one, minus_one_errno, (int)handled, unknown_fcntl == 0 ? "ok" : "failed",
           unknown_ioctl == 0 ? "ok" : "failed");
    return 0;
}
