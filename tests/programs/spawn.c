/* posix_spawn (clone3 with CLONE_VM|CLONE_VFORK) and vfork: the parent
 * resumes only once the child has exec'd. */
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int main(void)
{
    pid_t pid;
    char *argv[] = {"echo", "spawned", NULL};
    int status;
    fflush(stdout);
    if (posix_spawnp(&pid, "echo", NULL, NULL, argv, environ) != 0)
        return 1;
    waitpid(pid, &status, 0);
    pid_t child = vfork();
    if (child == 0) {
        execlp("echo", "echo", "vforked", (char *)NULL);
        _exit(127);
    }
    waitpid(child, &status, 0);
    printf("both children done, last status %d\n", WEXITSTATUS(status));
    return 0;
}
