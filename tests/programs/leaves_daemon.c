/* Leaves a daemon behind: a grandchild in a session of its own that sleeps
 * for argv[1] seconds (default 1000) after the program has exited. The
 * program waits for the child between them, as a daemon's starter does, so
 * the daemon is the one process left running. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    unsigned seconds = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
    int fds[2];
    pipe(fds);
    pid_t child = fork();
    if (child == 0) {
        if (fork() != 0)
            _exit(0);
        setsid();
        write(fds[1], "x", 1);
        sleep(seconds);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    char c;
    read(fds[0], &c, 1);
    printf("daemon started\n");
    return 0;
}
