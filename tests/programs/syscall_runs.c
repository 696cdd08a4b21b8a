/* Long runs of syscalls replay serves from the log, back to back: messages
 * written into a pipe and read back, with a getppid between them, and a
 * memory-only syscall (an mprotect replay runs for real) now and then. The
 * checksum printed at the end covers every byte read. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*   syscall_runs [ROUNDS]    (3,000 by default) */
#include <stdlib.h>

int main(int argc, char **argv)
{
    unsigned ROUNDS = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 3000;
    int p[2];
    if (pipe(p) != 0)
        return 1;
    static char page[4096] __attribute__((aligned(4096)));
    unsigned long sum = 0;
    for (unsigned i = 0; i < ROUNDS; i++) {
        char out[32], in[32];
        int n = snprintf(out, sizeof out, "message %u", i * 2654435761u);
        if (write(p[1], out, (size_t)n) != n || read(p[0], in, (size_t)n) != n)
            return 2;
        for (int k = 0; k < n; k++)
            sum = sum * 31 + (unsigned char)in[k];
        sum += getppid() > 0; /* (its value depends on who runs the program) */
        if (i % 500 == 499)
            mprotect(page, sizeof page, (i / 500) % 2 ? PROT_READ : PROT_READ | PROT_WRITE);
    }
    printf("%u rounds, checksum %lx\n", ROUNDS, sum);
    return 0;
}
