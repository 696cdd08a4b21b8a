/* Long runs of syscalls that replay answers inside the program (its
 * syscall agent): pwrite and pread on a file, fstat, lseek, getppid, and
 * a write to a pipe, back to back, with something the agent leaves to the
 * replayer now and then: an mprotect (run for real), a recorded SIGALRM
 * from an interval timer, and, half way, a fork whose child goes on with
 * the same calls and then execs `true`. The checksum covers every byte
 * read and every stat.
 *
 *   agent_runs [ROUNDS] [FILE]    (4,000 rounds; FILE is made and removed) */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t alarms;

static void on_alarm(int signo)
{
    (void)signo;
    alarms++;
}

static unsigned long rounds(int fd, int pipe_out, unsigned from, unsigned to, unsigned long sum)
{
    static char page[4096] __attribute__((aligned(4096)));
    for (unsigned i = from; i < to; i++) {
        char out[48], in[48];
        int n = snprintf(out, sizeof out, "round %u %u", i, i * 2654435761u);
        off_t at = (off_t)(i % 64) * 48;
        struct stat st;
        if (pwrite(fd, out, (size_t)n, at) != n || pread(fd, in, (size_t)n, at) != n || fstat(fd, &st) != 0 ||
            lseek(fd, at, SEEK_SET) != at || write(pipe_out, out, 1) != 1)
            exit(2);
        for (int k = 0; k < n; k++)
            sum = sum * 31 + (unsigned char)in[k];
        sum = sum * 7 + (unsigned long)st.st_size + (getppid() > 0);
        if (i % 700 == 699)
            mprotect(page, sizeof page, (i / 700) % 2 ? PROT_READ : PROT_READ | PROT_WRITE);
    }
    return sum;
}

int main(int argc, char** argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 4000;
    char name[64];
    snprintf(name, sizeof name, "agent_runs.%d", (int)getpid());
    const char* path = argc > 2 ? argv[2] : name;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int sink = open("/dev/null", O_WRONLY);
    if (fd < 0 || sink < 0)
        return 1;
    unlink(path);
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &every, NULL);
    unsigned long sum = rounds(fd, sink, 0, n / 2, 0);
    pid_t child = fork();
    if (child == 0) {
        unsigned long mine = rounds(fd, sink, n / 2, n, sum);
        printf("child: checksum %lx\n", mine);
        fflush(stdout);
        execl("/bin/true", "true", (char*)NULL);
        _exit(3);
    }
    int status = 0;
    waitpid(child, &status, 0);
    sum = rounds(fd, sink, n / 2, n, sum);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("%u rounds, checksum %lx, child %s, %s\n", n, sum,
           WIFEXITED(status) && !WEXITSTATUS(status) ? "ok" : "failed", alarms > 0 ? "alarms came" : "no alarm");
    return 0;
}
