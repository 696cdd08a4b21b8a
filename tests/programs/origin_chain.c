// Values that travel, for rewind origin: each mode ends with a global the
// test asks about, and prints where its value came from.
//   file:     bytes read from a file, copied by libc's memcpy (4 KiB), a
//             struct copy, arithmetic in a function, then stored
//   strdup:   a string read from a file, duplicated, one byte stored
//   random:   bytes from getrandom
//   constant: a constant in the code, through a function's return value
//   pipe:     bytes a child writes into a pipe, read by the parent
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

struct pair {
    long first;
    long second;
};

long result;
static char buffer[4096], copied[4096];

__attribute__((noinline)) long scaled(long x)
{
    return x * 2 + 1; /* ARITHMETIC */
}

__attribute__((noinline)) long answer(void)
{
    return 42; /* CONSTANT */
}

static void read_file(const char* path, size_t n)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, buffer, n) != (ssize_t)n) {
        perror(path);
        exit(1);
    }
    close(fd);
}

int main(int argc, char** argv)
{
    const char* mode = argc > 1 ? argv[1] : "file";
    const char* path = argc > 2 ? argv[2] : "origin.bin";
    size_t size = sizeof copied - (argc > 3 ? 1 : 0); // not a constant: libc's memcpy, not an inlined copy
    if (strcmp(mode, "file") == 0) {
        read_file(path, sizeof buffer);
        memcpy(copied, buffer, size); /* MEMCPY */
        struct pair p = {0, 0};
        p.first = *(long*)(copied + 16);
        struct pair q = p;        /* STRUCT COPY */
        result = scaled(q.first); /* RESULT */
        printf("file: result = %ld = 2 * (8 bytes at offset 16) + 1\n", result);
    } else if (strcmp(mode, "strdup") == 0) {
        read_file(path, 64);
        buffer[63] = 0;
        char* s = strdup(buffer + 8); /* STRDUP */
        result = s[3];                /* RESULT */
        printf("strdup: result = %ld = byte 11 of the file\n", result);
        free(s);
    } else if (strcmp(mode, "random") == 0) {
        long r;
        if (getrandom(&r, sizeof r, 0) != sizeof r)
            return 1;
        result = r; /* RESULT */
        printf("random: result from getrandom\n");
    } else if (strcmp(mode, "constant") == 0) {
        result = answer(); /* RESULT */
        printf("constant: result = %ld\n", result);
    } else if (strcmp(mode, "pipe") == 0) {
        int fds[2];
        if (pipe(fds) != 0)
            return 1;
        pid_t child = fork();
        if (child == 0) {
            long v = 0x1122334455667788;
            if (write(fds[1], &v, sizeof v) != sizeof v)
                _exit(1);
            _exit(0);
        }
        if (read(fds[0], &result, sizeof result) != sizeof result) /* RESULT */
            return 1;
        waitpid(child, NULL, 0);
        printf("pipe: result = %#lx from the child\n", result);
    }
    return 0;
}
