// watch: ledger.closed != 0
//
// A loop of syscalls: each message is written into a pipe and read back,
// then applied to a ledger. One late message is a "close" that an old
// code path applies although the ledger is still in use; later messages
// are refused. The store that closes the ledger sits between the read of
// that message and the write of the next one: the syscalls around it are
// where a recording has its events, the store is not.
//
//   watch_syscall_loop N    N scales the number of messages (0: tiny)
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { DEPOSIT, WITHDRAW, CLOSE };

struct message {
    unsigned kind;
    unsigned account;
    long amount;
};

struct {
    long balance[64];
    long refused;
    int closed;
} ledger;

static void apply(const struct message *m)
{
    if (ledger.closed) {
        ledger.refused++;
        return;
    }
    switch (m->kind) {
    case DEPOSIT:
        ledger.balance[m->account % 64] += m->amount;
        break;
    case WITHDRAW:
        ledger.balance[m->account % 64] -= m->amount;
        break;
    case CLOSE:
        ledger.closed = 1; /* CULPRIT */
        break;
    }
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long messages = scale ? 40000 * scale : 4000;
    long bad = messages / 100 * 85 + 3;
    int p[2];
    if (pipe(p)) {
        perror("pipe");
        return 1;
    }
    unsigned long long x = 5;
    for (long i = 0; i < messages; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        struct message out = {(unsigned)(x >> 63), (unsigned)(x >> 32), (long)(x >> 48)}, in;
        if (i == bad)
            out.kind = CLOSE;
        if (write(p[1], &out, sizeof out) != sizeof out || read(p[0], &in, sizeof in) != sizeof in) {
            perror("pipe");
            return 1;
        }
        apply(&in);
    }
    long total = 0;
    for (int a = 0; a < 64; a++)
        total += ledger.balance[a];
    printf("%ld messages: total %ld, refused %ld, closed %d\n", messages, total, ledger.refused, ledger.closed);
    return 0;
}
