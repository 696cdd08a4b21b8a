/* Every source of values that differ from run to run: replay must print
 * exactly what the recording printed. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static void hex(const char *label, const unsigned char *p, size_t n)
{
    printf("%s ", label);
    for (size_t i = 0; i < n; i++)
        printf("%02x", p[i]);
    printf("\n");
}

int main(void)
{
    struct timespec rt, mono;
    struct timeval tv;
    printf("time %ld\n", (long)time(NULL));
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    gettimeofday(&tv, NULL);
    printf("clock_gettime realtime %ld.%09ld monotonic %ld.%09ld\n", (long)rt.tv_sec, rt.tv_nsec, (long)mono.tv_sec,
           mono.tv_nsec);
    printf("gettimeofday %ld.%06ld\n", (long)tv.tv_sec, (long)tv.tv_usec);
    unsigned aux;
    printf("rdtsc %llu rdtscp %llu\n", (unsigned long long)__rdtsc(), (unsigned long long)__rdtscp(&aux));
    unsigned char buf[16];
    getrandom(buf, sizeof buf, 0);
    hex("getrandom", buf, sizeof buf);
    int fd = open("/dev/urandom", O_RDONLY);
    read(fd, buf, sizeof buf);
    close(fd);
    hex("urandom", buf, sizeof buf);
    printf("pid %d\n", (int)getpid());
    return 0;
}
