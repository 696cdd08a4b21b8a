/* System V shared memory between a parent and its children: a private
 * segment the children attach by its id (inherited) and fill in turn, a
 * second attach of it read-only at another address, a segment made with a
 * key (IPC_CREAT | IPC_EXCL) and removed while attached, a partial munmap
 * before shmdt, and SHM_REMAP over a private mapping. Everything printed
 * depends on what the processes wrote into the shared pages, which replay
 * must share between its processes as the kernel did. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 3
#define WORDS 3000 /* not a whole number of pages */

static void fail(const char *what)
{
    perror(what);
    exit(1);
}

static uint64_t checksum(const volatile uint32_t *words, int n)
{
    uint64_t h = 1469598103934665603ULL;
    for (int i = 0; i < n; i++)
        h = (h ^ words[i]) * 1099511628211ULL;
    return h;
}

int main(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int id = shmget(IPC_PRIVATE, WORDS * sizeof(uint32_t), IPC_CREAT | 0600);
    if (id < 0)
        fail("shmget");
    volatile uint32_t *shared = shmat(id, NULL, 0);
    if (shared == (void *)-1)
        fail("shmat");
    for (int c = 0; c < CHILDREN; c++) {
        pid_t pid = fork();
        if (pid < 0)
            fail("fork");
        if (pid == 0) {
            /* Its own attach, besides the inherited one. */
            volatile uint32_t *mine = shmat(id, NULL, 0);
            if (mine == (void *)-1)
                fail("child shmat");
            for (int i = c; i < WORDS; i += CHILDREN)
                mine[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)c;
            mine[0] += 1; /* a count every child adds to */
            shmdt((void *)mine);
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fail("child");
    }
    printf("after %d children: word 0 = %u, checksum %016llx\n", CHILDREN, shared[0],
           (unsigned long long)checksum(shared, WORDS));

    const volatile uint32_t *again = shmat(id, NULL, SHM_RDONLY);
    if (again == (void *)-1)
        fail("shmat read-only");
    printf("read-only attach sees the same words: %s\n",
           memcmp((const void *)again, (const void *)shared, WORDS * sizeof(uint32_t)) == 0 ? "yes" : "no");
    /* Part of it unmapped first: shmdt takes the rest. */
    if (munmap((void *)again, page) != 0 || shmdt((const void *)again) != 0)
        fail("munmap and shmdt");

    /* A keyed segment, removed while attached: it lives until detached. */
    key_t key = (key_t)(0x5e900000 | (getpid() & 0xfffff));
    int keyed = shmget(key, page, IPC_CREAT | IPC_EXCL | 0600);
    if (keyed < 0)
        fail("shmget with a key");
    volatile char *k = shmat(keyed, NULL, 0);
    if (k == (void *)-1)
        fail("shmat keyed");
    if (shmctl(keyed, IPC_RMID, NULL) != 0)
        fail("IPC_RMID");
    pid_t pid = fork();
    if (pid == 0) {
        strcpy((char *)k, "written by the child after IPC_RMID");
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    printf("keyed segment: \"%s\"\n", (const char *)k);

    /* SHM_REMAP over a private mapping at the first segment's address. */
    void *at = (void *)shared;
    if (shmdt(at) != 0)
        fail("shmdt");
    if (mmap(at, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != at)
        fail("mmap");
    volatile uint32_t *back = shmat(id, at, SHM_REMAP);
    if (back != at)
        fail("shmat SHM_REMAP");
    printf("remapped at the same address: word 0 = %u, checksum %016llx\n", back[0],
           (unsigned long long)checksum(back, WORDS));
    shmctl(id, IPC_RMID, NULL);
    return 0;
}
