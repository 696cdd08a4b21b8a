/* The syscall agent: answers a replayed program's syscalls from the ring
 * the replayer filled, inside the program, with no trap and no context
 * switch. Each call is checked as the replayer checks it (the site, the
 * number, every argument the syscall table names, every input byte the
 * trace keeps) before its output bytes are written; a call that does not
 * match, or one past the ring's end, is not answered here: it goes to
 * the kernel, where the replayer meets it and reports or serves it.
 *
 * Freestanding: no libc, no floating-point or vector registers (the
 * program's are not saved), no writes outside the ring and the outputs. */
#include "agent_ring.h"

struct rw_agent_frame { /* as agent_entry.S pushes them */
    uint64_t rcx, rax, r9, r8, r10, rdx, rsi, rdi;
};

extern uint8_t rw_agent_ring[] __attribute__((visibility("hidden"))); /* its header, then its calls */

void rw_agent_serve(struct rw_agent_frame* f) __attribute__((visibility("hidden")));

static int same_bytes(const uint8_t* a, const uint8_t* b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

static void copy_bytes(uint8_t* to, const uint8_t* from, uint64_t n)
{
    __asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(n) : : "memory");
}

static uint32_t padded(uint32_t n)
{
    return (n + 7u) & ~7u;
}

void rw_agent_serve(struct rw_agent_frame* f)
{
    struct rw_agent_header* ring = (struct rw_agent_header*)rw_agent_ring;
    if (ring->magic != RW_AGENT_MAGIC || ring->served >= ring->calls)
        return;
    const uint8_t* at = rw_agent_ring + sizeof *ring + ring->next;
    const struct rw_agent_call* call = (const struct rw_agent_call*)at;
    if (call->site != f->rcx || (uint64_t)call->nr != f->rax)
        return;
    const uint64_t args[6] = {f->rdi, f->rsi, f->rdx, f->r10, f->r8, f->r9};
    for (uint32_t i = 0; i < call->nargs && i < 6; i++)
        if (args[i] != call->args[i])
            return;
    const uint8_t* ranges = at + sizeof *call;
    const uint8_t* p = ranges;
    for (uint32_t i = 0; i < call->nranges; i++) {
        const struct rw_agent_range* r = (const struct rw_agent_range*)p;
        if (r->dir == RW_AGENT_IN && !same_bytes((const uint8_t*)r->addr, p + sizeof *r, r->length))
            return;
        p += sizeof *r + padded(r->length);
    }
    p = ranges;
    for (uint32_t i = 0; i < call->nranges; i++) {
        const struct rw_agent_range* r = (const struct rw_agent_range*)p;
        if (r->dir == RW_AGENT_OUT)
            copy_bytes((uint8_t*)r->addr, p + sizeof *r, r->length);
        p += sizeof *r + padded(r->length);
    }
    ring->next += call->size;
    ring->served++;
    f->rax = (uint64_t)call->result;
    f->rcx = call->site + 2;
}
