/* A thread that does not lead its process execs: the kernel ends the other
 * threads, the leader among them, and the exec'ing thread goes on as the
 * leader, with its id. Each round forks a child that does it twice over:
 * once while the leader waits in read(), once after the leader has ended
 * (pthread_exit) and is a zombie. The parent checks each child's status. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

static pthread_t leader;
static int leader_ends;

static char self[4096];

static void* exec_self(void* arg)
{
    (void)arg;
    if (leader_ends)
        pthread_join(leader, NULL); /* returns once the leader has ended */
    write(1, leader_ends ? "z" : "r", 1);
    /* (Not /proc/self/exe: an ended leader has no program any more.) */
    char* args[] = {self, "new", NULL};
    execve(self, args, environ);
    _exit(1);
}

int main(int argc, char** argv)
{
    (void)argv;
    if (argc > 1) {
        /* The new image runs as its process's leader. */
        return getpid() == syscall(SYS_gettid) ? 77 : 1;
    }
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0)
        return 1;
    self[n] = 0;
    int rounds = 3, good = 0;
    setvbuf(stdout, NULL, _IONBF, 0);
    for (int i = 0; i < 2 * rounds; i++) {
        pid_t child = fork();
        if (child == 0) {
            int fds[2];
            pipe(fds);
            leader = pthread_self();
            leader_ends = i % 2;
            pthread_t t;
            pthread_create(&t, NULL, exec_self, NULL);
            if (leader_ends)
                pthread_exit(NULL);
            char c;
            read(fds[0], &c, 1);
            _exit(2);
        }
        int status;
        waitpid(child, &status, 0);
        good += WIFEXITED(status) && WEXITSTATUS(status) == 77;
    }
    printf("\n%d of %d children exec'd from a thread\n", good, 2 * rounds);
    return 0;
}
