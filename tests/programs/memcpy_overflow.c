// The shape of MySQL bug 12228: a fixed-size name buffer sits before a
// pointer in a struct; a copy that trusts the source's length overruns the
// buffer and overwrites the pointer, which is only used much later.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct table {
    char name[16];
    long *rows; // overwritten by the overrun
    long count;
};

static long storage[8];

static void set_name(struct table *t, const char *src, size_t len)
{
    memcpy(t->name, src, len); // overflow-line
}

int main(void)
{
    struct table *t = calloc(1, sizeof *t);
    t->rows = storage;
    t->count = 8;
    printf("rows pointer at %p holds %p\n", (void *)&t->rows, (void *)t->rows);
    fflush(stdout);
    // Work before and after, so that the overrun is somewhere in the middle.
    long sum = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 8; i++)
            t->rows[i] = round + i, sum += t->rows[i];
        if (getppid() < 0)
            return 1;
        if (round == 123) {
            const char *long_name = "a-name-that-is-far-too-long-for-16-bytes";
            set_name(t, long_name, strlen(long_name) + 1);
            break;
        }
    }
    for (int i = 0; i < 1000; i++)
        sum += i % 7;
    printf("rows pointer now %p, sum %ld\n", (void *)t->rows, sum);
    return 0;
}
