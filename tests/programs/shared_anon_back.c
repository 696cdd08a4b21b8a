/* A page of MAP_SHARED anonymous memory that a child and its parent both
 * write: going back in time in the parent must find the page as it was
 * then, although every snapshot of the replay shares it with the live
 * processes. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
    volatile long* shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shared == MAP_FAILED)
        return 1;
    shared[0] = 1;
    pid_t child = fork();
    if (child == 0) {
        shared[0] = 2;
        _exit(0);
    }
    waitpid(child, NULL, 0);
    long seen = shared[0];
    shared[1] = 5;
    long before = shared[1]; /* the first stop */
    shared[1] = 6;
    shared[0] = 3;
    printf("child wrote %ld, then %ld and %ld\n", seen, before, shared[1]); /* the second stop */
    return 0;
}
