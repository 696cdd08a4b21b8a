// watch: current.limit != 4096
//
// Records of varying length are copied, one after the other, into a fixed
// 24-byte label that sits just before a limit in the same global. One late
// record is longer than the label and memcpy runs over into the limit.
// The instruction that changes the limit is inside libc's memcpy (under
// whatever name libc gives it, e.g. __memcpy_avx_unaligned_erms): the
// culprit line, the memcpy call, is that of the caller's frame, take, in
// the report's backtrace; the function to expect there is memcpy's caller.
//
//   watch_memcpy N    N scales the number of records copied (0: tiny)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL 24
#define POOL 4096

struct {
    char label[LABEL];
    unsigned long limit;
    unsigned long used;
} current = {"", 4096, 0};

static char pool[POOL + 64];

// The length comes from the record and is trusted. Not inlined, so that
// memcpy is called with a length known only at run time, never expanded
// into a few moves.
__attribute__((noinline, noclone)) static void take(const char *src, size_t len)
{
    memcpy(current.label, src, len); /* CULPRIT */
    if (len < LABEL)
        memset(current.label + len, 0, LABEL - len);
}

static unsigned long digest(void)
{
    unsigned long h = 1469598103934665603ul;
    for (int i = 0; i < LABEL; i += 8) {
        unsigned long w;
        memcpy(&w, current.label + i, sizeof w);
        h = (h ^ w) * 1099511628211ul;
    }
    return h;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long records = scale ? 5000000 * scale : 500000;
    long bad = records / 100 * 85 + 17;
    unsigned long long x = 7;
    for (int i = 0; i < POOL + 64; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        pool[i] = (char)('a' + (x >> 59));
    }
    unsigned long h = 0;
    for (long r = 0; r < records; r++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        // The bad record is 1 to 8 bytes too long: the overrun stays in the limit.
        size_t len = r == bad ? LABEL + 1 + (size_t)(x >> 61) : 1 + (size_t)(x >> 60) % LABEL;
        take(pool + (x >> 40) % POOL, len);
        current.used += len;
        h ^= digest();
    }
    printf("%ld records, %lu bytes: %lx, limit %lx\n", records, current.used, h, current.limit);
    return 0;
}
