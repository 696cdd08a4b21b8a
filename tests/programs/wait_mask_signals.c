/* A wait with a signal mask of its own (ppoll, then pselect6) blocks
 * SIGCHLD while a child sends signals the parent has no handler for and
 * ends. The kernel delivers those under the wait's mask, puts the thread's
 * own mask back, sets the wait up to run again, and only then delivers
 * SIGCHLD, with the thread back on the syscall instruction. Each round
 * prints how the wait ended and whether SIGCHLD is unblocked after it. */
#define _GNU_SOURCE
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#define ROUNDS 6

int main(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 1;
    sigset_t wait_mask;
    sigemptyset(&wait_mask);
    sigaddset(&wait_mask, SIGCHLD);
    signal(SIGURG, SIG_DFL); /* ignored by default, like SIGWINCH */
    pid_t parent = getpid();
    for (int round = 0; round < ROUNDS; round++) {
        pid_t child = fork();
        if (child == 0) {
            usleep(50000);
            kill(parent, SIGWINCH);
            if (round % 2)
                kill(parent, SIGURG);
            _exit(0);
        }
        struct timespec timeout = {0, 300000000};
        int ret;
        if (round < ROUNDS / 2) {
            struct pollfd pfd = {fds[0], POLLIN, 0};
            ret = ppoll(&pfd, 1, &timeout, &wait_mask);
        } else {
            fd_set readable;
            FD_ZERO(&readable);
            FD_SET(fds[0], &readable);
            ret = pselect(fds[0] + 1, &readable, NULL, NULL, &timeout, &wait_mask);
        }
        sigset_t now;
        sigprocmask(SIG_BLOCK, NULL, &now);
        waitpid(child, NULL, 0);
        printf("round %d: %s returned %d, SIGCHLD %s after it\n", round, round < ROUNDS / 2 ? "ppoll" : "pselect",
               ret, sigismember(&now, SIGCHLD) ? "blocked" : "unblocked");
    }
    return 0;
}
