/* Reads one file over and over and prints each pass's checksum, until a
 * second file appears (check_reliability.py changes the first meanwhile
 * from outside the recording). It needs arguments, so the per-program
 * checks skip it. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char** argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reread_until FILE STOP-FILE\n");
        return 2;
    }
    static unsigned char buf[65536];
    for (int pass = 0;; pass++) {
        int fd = open(argv[1], O_RDONLY);
        if (fd < 0)
            return 1;
        uint64_t h = 14695981039346656037ull;
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0)
            for (ssize_t i = 0; i < n; i++)
                h = (h ^ buf[i]) * 1099511628211ull;
        close(fd);
        printf("pass %d: %016llx\n", pass, (unsigned long long)h);
        fflush(stdout);
        if (access(argv[2], F_OK) == 0)
            return 0;
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL);
    }
}
