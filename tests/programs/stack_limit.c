/* A child that lowers its own stack size limit and recurses until the
 * stack cannot grow: the depth of the SIGSEGV depends on the limit, which
 * replay must set too, not only report. The parent says how the child
 * ended; the depth itself varies with the environment's size. */
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long* depth;

static long recurse(long n)
{
    volatile char frame[256];
    frame[0] = (char)n;
    *depth = n;
    if (n < 0) /* never: the stack ends first */
        return 0;
    return recurse(n + 1) + frame[0];
}

int main(void)
{
    depth = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (depth == MAP_FAILED)
        return 1;
    pid_t child = fork();
    if (child == 0) {
        struct rlimit limit = {256 * 1024, 256 * 1024};
        if (setrlimit(RLIMIT_STACK, &limit) != 0)
            _exit(2);
        return (int)recurse(0);
    }
    int status;
    waitpid(child, &status, 0);
    printf("child %s, deeper than 500 frames: %s\n",
           WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV ? "died of SIGSEGV" : "ended otherwise",
           *depth > 500 ? "yes" : "no");
    return 0;
}
