// Calls and writes the program counts itself, for rewind calls and rewind
// writes: a function called from a loop (with a string argument), a
// recursion, a call that leaves by longjmp, two threads calling one
// function, a global written by stores and by a read(), and many calls of
// a function nobody asks about.
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long total;
int last_work; // written by both threads
static int calls_of_accumulate;
static long sum_of_values, sum_of_returns;
static jmp_buf out;

__attribute__((noinline)) int accumulate(int value, const char* tag)
{
    calls_of_accumulate++;
    total += value; /* STORE */
    return (int)(total % 1000) + (tag[0] == 'o');
}

__attribute__((noinline)) unsigned factorial(unsigned n)
{
    return n <= 1 ? 1 : n * factorial(n - 1);
}

__attribute__((noinline)) int may_jump(int jump)
{
    if (jump)
        longjmp(out, 1);
    return jump + 7;
}

__attribute__((noinline)) double halve(double x, int times)
{
    for (int i = 0; i < times; i++)
        x /= 2;
    return x;
}

__attribute__((noinline)) long noise(long i)
{
    return i * 3 + 1;
}

__attribute__((noinline)) int work(int id, int i)
{
    last_work = id * 1000 + i; /* THREAD STORE */
    return last_work;
}

static void* worker(void* arg)
{
    int id = (int)(long)arg, sum = 0;
    for (int i = 0; i < 30; i++)
        sum += work(id, i);
    return (void*)(long)sum;
}

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 50;
    long noisy = argc > 2 ? atol(argv[2]) : 0;
    int writes = 0;
    for (int i = 0; i < n; i++) {
        sum_of_values += i * 3;
        sum_of_returns += accumulate(i * 3, i % 2 ? "odd" : "even");
        writes++;
        if (i % 10 == 0)
            getppid();
    }
    long sink = 0;
    for (long i = 0; i < noisy; i++)
        sink += noise(i);
    unsigned f = factorial(6);
    int returned = 0;
    for (int jump = 0; jump < 3; jump++)
        if (setjmp(out) == 0)
            returned += may_jump(jump == 1) == 7;
    double h = halve(10.0, 2);
    pthread_t threads[2];
    long thread_sums = 0;
    for (long id = 1; id <= 2; id++)
        pthread_create(&threads[id - 1], NULL, worker, (void*)id);
    for (int i = 0; i < 2; i++) {
        void* sum;
        pthread_join(threads[i], &sum);
        thread_sums += (long)sum;
    }
    int fd = open("/dev/zero", O_RDONLY);
    if (read(fd, &total, sizeof total) == sizeof total)
        writes++;
    close(fd);
    printf("accumulate calls=%d values=%ld returns=%ld\n", calls_of_accumulate, sum_of_values, sum_of_returns);
    printf("total writes=%d\nfactorial 6=%u\nmay_jump calls=3 returned=%d\nhalve=%g\nwork calls=60 sum=%ld\n", writes,
           f, returned, h, thread_sums);
    printf("noise calls=%ld sink=%ld\n", noisy, sink);
    return 0;
}
