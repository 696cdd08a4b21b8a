/* rewind — the register comparison of replay's breakpoint filters
 * (register_match.bpf.c, position_match.bpf.c). */
#ifndef REWIND_MATCH_REGISTERS_BPF_H
#define REWIND_MATCH_REGISTERS_BPF_H

/* Whether the registers at a breakpoint's execution are `want` (the first
 * 21 words of user_regs_struct). Most executions differ in the counter,
 * the pointer, the flags of a loop: the instruction pointer and the stack
 * pointer first. orig_ax and flags are not compared (as in the replayer),
 * nor the segment registers (16-bit fields here, which a program may not
 * read as such: the replayer compares them). */
static __always_inline int registers_match(const struct pt_regs *r, const __u64 *want)
{
	return r->ip == want[16] && r->sp == want[19] && r->ax == want[10] && r->cx == want[11] &&
	       r->dx == want[12] && r->si == want[13] && r->di == want[14] && r->r8 == want[9] &&
	       r->r9 == want[8] && r->r10 == want[7] && r->r11 == want[6] && r->bx == want[5] &&
	       r->bp == want[4] && r->r12 == want[3] && r->r13 == want[2] && r->r14 == want[1] &&
	       r->r15 == want[0];
}

#endif
