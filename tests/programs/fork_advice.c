/* Memory kept out of fork children (MADV_DONTFORK, as V8 does with its
 * heap; MADV_WIPEONFORK), filled round by round, each round printed: the
 * replay's snapshots are forks, and one restored must still hold it. At the
 * end a child of the program's own sees what the kernel gives a child:
 * zeros for the wiped memory, and no kept memory at all. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static sigjmp_buf missing;

static void on_segv(int signo)
{
    (void)signo;
    siglongjmp(missing, 1);
}

#define SIZE (1 << 20)

int main(void)
{
    uint8_t* kept = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint8_t* wiped = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (kept == MAP_FAILED || wiped == MAP_FAILED || madvise(kept, SIZE, MADV_DONTFORK) != 0 ||
        madvise(wiped, SIZE, MADV_WIPEONFORK) != 0) {
        perror("fork_advice");
        return 1;
    }
    uint64_t sum = 0;
    for (int round = 0; round < 40; round++) {
        memset(kept + round * 4096, round + 1, 4096);
        memset(wiped + round * 4096, round + 7, 4096);
        for (int i = 0; i <= round; i++)
            sum = sum * 31 + kept[i * 4096] + wiped[i * 4096 + 100];
        printf("round %d: %llu\n", round, (unsigned long long)sum);
        fflush(stdout);
    }
    pid_t child = fork();
    if (child == 0) {
        signal(SIGSEGV, on_segv);
        volatile int kept_there = 0;
        if (sigsetjmp(missing, 1) == 0)
            kept_there = kept[4096] != 0;
        printf("child: wiped memory reads %d, kept memory %s\n", wiped[4096 + 100],
               kept_there ? "there" : "not there");
        fflush(stdout);
        _exit(0);
    }
    waitpid(child, NULL, 0);
    printf("parent: wiped memory reads %d, kept memory reads %d\n", wiped[4096 + 100], kept[4096]);
    return 0;
}
