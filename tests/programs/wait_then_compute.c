/* Waits 200 ms in nanosleep, then computes for about 30 ms without a
 * syscall, then prints: a syscall's exit time is its thread's running
 * time, so the wait adds nothing to it and the computation all of it
 * (check_record.py). */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(void)
{
    write(1, "waiting\n", 8);
    struct timespec pause = {0, 200 * 1000 * 1000};
    nanosleep(&pause, NULL);
    write(1, "computing\n", 10);
    unsigned long x = 88172645463325252ul;
    for (long i = 0; i < 30 * 1000 * 1000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    printf("%lx\n", x);
    return 0;
}
