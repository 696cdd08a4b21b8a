/* The syscall agent's memory, shared in layout by the agent (plain C,
 * compiled into the code the replayer maps into a replayed process) and
 * the replayer that fills its ring (replay/engine/syscall_agent.cpp).
 *
 * One agent per address space, at `base`:
 *
 *   base + RW_AGENT_EXIT    `jmp *%rcx`: every way out of the agent
 *   base + RW_AGENT_ENTRY   where each site's stub jumps
 *   base + RW_AGENT_STUBS   one stub per patched site (RW_AGENT_STUB_SIZE)
 *   base + RW_AGENT_DATA    the agent's own stack (read-write)
 *   base + RW_AGENT_RING    the ring: a header, then the calls to serve
 *
 * The code pages are read and execute only; the replayer writes them
 * through /proc/PID/mem. */
#ifndef REWIND_AGENT_RING_H
#define REWIND_AGENT_RING_H

#define RW_AGENT_EXIT 0x0
#define RW_AGENT_ENTRY 0x10
#define RW_AGENT_CODE_MAX 0x1000
#define RW_AGENT_STUBS 0x1000
#define RW_AGENT_STUB_SIZE 24
#define RW_AGENT_STUBS_END 0x4000
#define RW_AGENT_DATA 0x4000
#define RW_AGENT_STACK_TOP 0x5000
#define RW_AGENT_RING 0x5000
#define RW_AGENT_RING_SIZE (1u << 20)
#define RW_AGENT_SIZE (RW_AGENT_RING + RW_AGENT_RING_SIZE)

#ifndef __ASSEMBLER__
#include <stdint.h>

#define RW_AGENT_MAGIC 0x746e656761777275ull /* "urwagent" */
#define RW_AGENT_LAYOUT 1u

/* The ring's header. The replayer writes `calls` (and the calls after
 * the header) while the thread that uses the agent is stopped or blocked
 * in a notification; the agent advances `served` and `next`. */
struct rw_agent_header {
    uint64_t magic;
    uint32_t layout;
    uint32_t calls;  /* how many calls follow */
    uint32_t served; /* how many of them the agent answered */
    uint32_t next;   /* offset of the next call to serve, from the header's end */
};

/* One recorded call: the agent answers it when the program makes it at
 * `site` with these arguments and input bytes, writing the output bytes
 * and returning `result`. Its ranges follow, each padded to 8 bytes. */
struct rw_agent_call {
    uint64_t site; /* address of the syscall instruction */
    int64_t nr;
    uint64_t args[6];
    int64_t result;
    uint32_t nargs; /* arguments checked */
    uint32_t nranges;
    uint32_t size; /* bytes of this call, its ranges included */
    uint32_t pad;
};

#define RW_AGENT_IN 1u  /* bytes the call must find there */
#define RW_AGENT_OUT 2u /* bytes the call leaves there */

struct rw_agent_range {
    uint64_t addr;
    uint32_t length;
    uint32_t dir;
};

#endif /* __ASSEMBLER__ */
#endif
