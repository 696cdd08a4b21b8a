/* Runs on after `rewind record --detach-after`: a round every 50 ms, in
 * two threads (the time from the vDSO, an rdtsc, a child waited for), then
 * a look at what the recording may have left behind: a tracer, a seccomp
 * filter, the rdtsc trap in any thread, no address randomization, a
 * patched vDSO (compared with the one a freshly started program gets).
 * `detach_target --vdso-digest` prints its own vDSO's digest. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static uint64_t vdso_digest(void)
{
    FILE* maps = fopen("/proc/self/maps", "r");
    char line[512];
    uint64_t h = 1469598103934665603ull;
    while (maps && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        if (!strstr(line, "[vdso]") || sscanf(line, "%lx-%lx", &start, &end) != 2)
            continue;
        for (const unsigned char* p = (const unsigned char*)start; p < (const unsigned char*)end; p++)
            h = (h ^ *p) * 1099511628211ull;
    }
    if (maps)
        fclose(maps);
    return h;
}

static uint64_t fresh_vdso_digest(void)
{
    int fd[2];
    if (pipe(fd) != 0)
        return 0;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        execl("/proc/self/exe", "detach_target", "--vdso-digest", (char*)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[64] = {0};
    ssize_t n = read(fd[0], buf, sizeof buf - 1);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    return n > 0 ? strtoull(buf, NULL, 16) : 0;
}

/* The TracerPid or Seccomp line of a thread's status. */
static long status_field(const char* path, const char* field)
{
    FILE* f = fopen(path, "r");
    char line[256];
    long value = -1;
    size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, len) && line[len] == ':')
            value = strtol(line + len + 1, NULL, 10);
    if (f)
        fclose(f);
    return value;
}

static int rounds;
static volatile int thread_tsc_mode = -1;
static long worker_tracer = -1;

static void one_round(const char* who, int i)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t tsc = __rdtsc();
    pid_t child = fork();
    if (child == 0)
        _exit(i % 7);
    int status = 0;
    pid_t waited = waitpid(child, &status, 0);
    printf("%s round %d: clock %s, rdtsc %s, child %s\n", who, i, ts.tv_sec || ts.tv_nsec ? "ok" : "zero",
           tsc ? "ok" : "zero", waited == child && WEXITSTATUS(status) == i % 7 ? "ok" : "WRONG");
    fflush(stdout);
}

/* Inside the vDSO's time functions most of the time: the detach stops it
 * there, in the code rewind put in their place. */
static volatile int stop_reading;
static long reads;
static int went_back;

static void* reader(void* arg)
{
    (void)arg;
    struct timespec last = {0, 0}, now;
    struct timeval tv;
    while (!stop_reading) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec < last.tv_sec || (now.tv_sec == last.tv_sec && now.tv_nsec < last.tv_nsec))
            went_back = 1;
        last = now;
        gettimeofday(&tv, NULL);
        if (++reads % 200 == 0)
            usleep(1000); /* (the others get their turns while recorded) */
    }
    return NULL;
}

static void* worker(void* arg)
{
    (void)arg;
    for (int i = 0; i < rounds; i++) {
        one_round("worker", i);
        usleep(50000);
    }
    int mode = 0;
    prctl(PR_GET_TSC, &mode, 0, 0, 0);
    thread_tsc_mode = mode;
    worker_tracer = status_field("/proc/thread-self/status", "TracerPid");
    return NULL;
}

int main(int argc, char** argv)
{
    if (argc > 1 && !strcmp(argv[1], "--vdso-digest")) {
        printf("%llx\n", (unsigned long long)vdso_digest());
        return 0;
    }
    rounds = argc > 1 ? atoi(argv[1]) : 40;
    pthread_t t, r;
    pthread_create(&t, NULL, worker, NULL);
    pthread_create(&r, NULL, reader, NULL);
    for (int i = 0; i < rounds; i++) {
        one_round("main", i);
        usleep(50000);
    }
    pthread_join(t, NULL);
    stop_reading = 1;
    pthread_join(r, NULL);
    int mode = 0;
    prctl(PR_GET_TSC, &mode, 0, 0, 0);
    int persona = personality(0xffffffff);
    uint64_t own = vdso_digest(), fresh = fresh_vdso_digest();
    printf("after: tracer %ld/%ld, seccomp %ld, tsc %s/%s, randomization %s, vdso %s, clock reader %s\n",
           status_field("/proc/self/status", "TracerPid"), worker_tracer, status_field("/proc/self/status", "Seccomp"),
           mode == PR_TSC_ENABLE ? "enabled" : "TRAPPED", thread_tsc_mode == PR_TSC_ENABLE ? "enabled" : "TRAPPED",
           persona & ADDR_NO_RANDOMIZE ? "OFF" : "on", own == fresh ? "as the kernel's" : "CHANGED",
           went_back ? "WENT BACK"
           : reads   ? "ok"
                     : "NEVER RAN");
    return argc > 2 ? atoi(argv[2]) : 0;
}
