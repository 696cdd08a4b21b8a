/* Reads the time stamp counter with SIGSEGV blocked, then execs itself and
 * does it again. rdtsc is trapped while recording, as a SIGSEGV the kernel
 * forces through the mask (and so unblocks); the program must still find
 * SIGSEGV blocked after each, as natively. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long long read_tsc(void)
{
    unsigned int lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((unsigned long long)hi << 32) | lo;
}

static int segv_blocked(void)
{
    sigset_t now;
    sigprocmask(SIG_SETMASK, NULL, &now);
    return sigismember(&now, SIGSEGV);
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "again") == 0) {
        printf("after exec: blocked %d\n", segv_blocked());
        read_tsc();
        printf("after exec and rdtsc: blocked %d\n", segv_blocked());
        return 0;
    }
    sigset_t segv;
    sigemptyset(&segv);
    sigaddset(&segv, SIGSEGV);
    sigprocmask(SIG_BLOCK, &segv, NULL);
    read_tsc();
    printf("after rdtsc: blocked %d\n", segv_blocked());
    fflush(stdout);
    execl("/proc/self/exe", argv[0], "again", (char*)NULL);
    perror("exec");
    return 1;
}
