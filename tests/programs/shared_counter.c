/* Two processes that share a page (MAP_SHARED anonymous memory, inherited
 * across fork) and write it in their own code, with no syscall between:
 * first they take turns through a flag each spins on (each turn is a
 * hand-over the recorder must make while one of them spins), then they
 * count under a spin lock and without one (lost updates show how they
 * interleaved). Replay must give the recording's values. */
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

struct shared {
    volatile int turn;
    volatile long turns;
    volatile int lock;
    volatile long locked;
    volatile long racy;
};

static void take_turns(struct shared* s, int me, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        while (s->turn != me)
            ;
        s->turns = s->turns * 3 + me + 1;
        s->turn = !me;
    }
}

static void count(struct shared* s, long rounds)
{
    for (long i = 0; i < rounds; i++) {
        s->racy = s->racy + 1;
        while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
            ;
        s->locked = s->locked + 1;
        __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
    }
}

int main(void)
{
    struct shared* s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t child = fork();
    take_turns(s, child == 0, 20);
    count(s, 3000000);
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    printf("turns %lx, locked %ld, racy %ld\n", (unsigned long)s->turns, s->locked, s->racy);
    return 0;
}
