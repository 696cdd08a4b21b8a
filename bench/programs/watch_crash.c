// watch: session == 0
//
// The program keeps a pointer to its current session and switches
// sessions by name every 1,024 requests. The last switch, late in the
// run, names a session that does not exist, and the lookup's NULL is
// stored without a check. The requests after it are dropped quietly; at
// the end the program counts the run in the session and dies of SIGSEGV,
// far from the store.
//
//   watch_crash N    N scales the number of requests (0: tiny)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SESSIONS 16
#define SWITCH_EVERY 1024

struct session {
    char name[16];
    long requests;
    unsigned long digest;
};

static struct session table[SESSIONS];
// Set from the start, so that `session == 0` is false from the program's
// first instruction to the bad lookup.
struct session *session = &table[0];

static struct session *lookup(const char *name)
{
    for (int i = 0; i < SESSIONS; i++)
        if (strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int main(int argc, char **argv)
{
    long scale = argc > 1 ? atol(argv[1]) : 1;
    long requests = scale ? 10000000 * scale : 1000000;
    long last_switch = requests / 100 * 85 / SWITCH_EVERY * SWITCH_EVERY;
    for (int i = 0; i < SESSIONS; i++)
        snprintf(table[i].name, sizeof table[i].name, "s%02d", i);
    unsigned long long x = 3;
    unsigned long work = 0;
    long dropped = 0;
    char name[16];
    for (long r = 0; r < requests; r++) {
        for (int k = 0; k < 8; k++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (r % SWITCH_EVERY == 0 && r <= last_switch) {
            snprintf(name, sizeof name, "s%02d", r == last_switch ? 99 : (int)(x >> 60));
            session = lookup(name); /* CULPRIT */
        }
        work = work * 31 + (x >> 40);
        if (!session) {
            dropped++;
            continue;
        }
        session->requests++;
        session->digest ^= work;
    }
    printf("%ld requests, %ld dropped: %lx\n", requests, dropped, work);
    fflush(stdout);
    session->requests++; // the crash
    return 0;
}
