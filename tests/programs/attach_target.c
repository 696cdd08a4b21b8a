/* A long-running process for rewind record --pid: its state when rewind
 * attaches holds an open file, a pipe, a socket pair, a terminal if it has
 * one, a thread blocked in read, a thread blocked in a futex (condition
 * variable), a pending interval timer and a blocked, pending signal. Every
 * tick it wakes both threads and prints one line that depends on all it
 * did so far; at the end it checks its own arithmetic and says so. With
 * `crash`, it dies of SIGSEGV after its last tick instead (a flight
 * recorder's window ends there). With `tree`, it forks a child first that
 * ticks on its own (rewind record --pid --tree), and waits for it.
 *
 *   attach_target TICKS TICK_MS FILE [crash|tree]
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int pipe_fds[2], sock_fds[2];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static unsigned long wakes, bytes_read, round_wanted;
static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
    (void)sig;
    alarms++;
}

static void* reader(void* arg)
{
    (void)arg;
    char c;
    while (read(pipe_fds[0], &c, 1) == 1) {
        pthread_mutex_lock(&lock);
        bytes_read += (unsigned char)c;
        pthread_mutex_unlock(&lock);
        write(sock_fds[1], &c, 1);
    }
    return NULL;
}

static void* waiter(void* arg)
{
    (void)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (round_wanted == seen)
            pthread_cond_wait(&cond, &lock);
        seen = round_wanted;
        if (seen == (unsigned long)-1)
            break;
        wakes++;
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

static unsigned long child_count;

static void child_ticks(int ticks, int tick_ms)
{
    for (int i = 1; i <= ticks; i++) {
        struct timespec pause = {tick_ms / 1000, (long)(tick_ms % 1000) * 1000000};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
        }
        child_count += (unsigned long)i * 3;
        printf("child tick %d count %lu\n", i, child_count);
        fflush(stdout);
    }
}

int main(int argc, char** argv)
{
    int crash = argc == 5 && strcmp(argv[4], "crash") == 0, tree = argc == 5 && strcmp(argv[4], "tree") == 0;
    if (argc != 4 && !crash && !tree) {
        fprintf(stderr, "usage: attach_target TICKS TICK_MS FILE [crash|tree]\n");
        return 2;
    }
    int ticks = atoi(argv[1]), tick_ms = atoi(argv[2]);
    int file = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (file < 0 || pipe(pipe_fds) || socketpair(AF_UNIX, SOCK_STREAM, 0, sock_fds))
        return 3;
    signal(SIGALRM, on_alarm);
    struct itimerval every = {{0, 250000}, {0, 250000}};
    setitimer(ITIMER_REAL, &every, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    raise(SIGUSR1); /* pending, blocked, for the whole run */
    pthread_t r, w;
    pthread_create(&r, NULL, reader, NULL);
    pthread_create(&w, NULL, waiter, NULL);
    printf("pid %d\n", getpid());
    fflush(stdout);
    pid_t child = tree ? fork() : -1;
    if (child == 0) {
        child_ticks(ticks, tick_ms);
        _exit(0);
    }
    uint64_t value = 1469598103934665603ull, expect = value;
    unsigned long sum = 0;
    for (int i = 1; i <= ticks; i++) {
        struct timespec pause = {tick_ms / 1000, (long)(tick_ms % 1000) * 1000000};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR) {
        }
        char c = (char)('a' + i % 26);
        write(pipe_fds[1], &c, 1);
        char echo;
        read(sock_fds[0], &echo, 1);
        pthread_mutex_lock(&lock);
        round_wanted = (unsigned long)i;
        pthread_cond_signal(&cond);
        pthread_mutex_unlock(&lock);
        value = (value ^ (uint64_t)echo) * 1099511628211ull;
        sum += (unsigned char)c;
        dprintf(file, "%d %llu\n", i, (unsigned long long)value);
        printf("tick %d value %llu\n", i, (unsigned long long)value);
        fflush(stdout);
    }
    if (crash)
        *(volatile uint64_t*)(uintptr_t)(value & 0xfff) = value; /* the first page is never mapped */
    pthread_mutex_lock(&lock);
    round_wanted = (unsigned long)-1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    close(pipe_fds[1]);
    pthread_join(r, NULL);
    pthread_join(w, NULL);
    for (int i = 1; i <= ticks; i++)
        expect = (expect ^ (uint64_t)(char)('a' + i % 26)) * 1099511628211ull;
    int child_status = 0;
    if (child > 0 && (waitpid(child, &child_status, 0) != child || child_status != 0))
        printf("child %d: status %d\n", child, child_status);
    sigset_t pending;
    sigpending(&pending);
    printf("done %d: value %s, bytes %s, usr1 %s, wakes %lu, alarms %s\n", ticks, value == expect ? "ok" : "WRONG",
           bytes_read == sum ? "ok" : "WRONG", sigismember(&pending, SIGUSR1) ? "pending" : "LOST", wakes,
           alarms > 0 ? "some" : "none");
    return value == expect && bytes_read == sum ? 0 : 1;
}
