/* process_vm_writev: into the caller's own memory (two pieces gathered
 * into two others), and into a child's, at the address of a global the
 * child then prints. Replay must write both: the first as the call's
 * outputs, the second into the replayed child. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static char message[32] = "not written";

int main(void)
{
    char a[] = "hello, ", b[] = "own memory";
    char x[8] = {0}, y[16] = {0};
    struct iovec local[2] = {{a, 7}, {b, 10}};
    struct iovec remote[2] = {{x, 7}, {y, 10}};
    ssize_t n = process_vm_writev(getpid(), local, 2, remote, 2, 0);
    printf("own: %zd bytes: %.7s%.10s\n", n, x, y);
    fflush(stdout);

    int go[2], done[2];
    if (pipe(go) != 0 || pipe(done) != 0)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            return 1;
        printf("child: %s\n", message);
        return 0;
    }
    char text[] = "written by the parent";
    struct iovec from = {text, sizeof text}, to = {message, sizeof text};
    n = process_vm_writev(child, &from, 1, &to, 1, 0);
    printf("parent: %zd bytes into the child\n", n);
    fflush(stdout);
    if (write(go[1], "g", 1) != 1)
        return 1;
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
