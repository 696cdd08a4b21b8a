/* Pipes within one process, and to a forked child and back. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    int p[2];
    char buf[128] = {0};
    pipe(p);
    write(p[1], "through a pipe", 14);
    read(p[0], buf, sizeof buf - 1);
    printf("self: %s\n", buf);
    close(p[0]);
    close(p[1]);

    int to_child[2], from_child[2];
    pipe(to_child);
    pipe(from_child);
    pid_t pid = fork();
    if (pid == 0) {
        char in[64] = {0};
        ssize_t n = read(to_child[0], in, sizeof in - 1);
        for (ssize_t i = 0; i < n; i++)
            in[i] = (char)(in[i] >= 'a' && in[i] <= 'z' ? in[i] - 32 : in[i]);
        write(from_child[1], in, (size_t)n);
        _exit(0);
    }
    write(to_child[1], "shout this", 10);
    memset(buf, 0, sizeof buf);
    ssize_t n = read(from_child[0], buf, sizeof buf - 1);
    int status;
    waitpid(pid, &status, 0);
    printf("child: %.*s (status %d)\n", (int)n, buf, WEXITSTATUS(status));
    return 0;
}
