// SPDX-License-Identifier: GPL-2.0
/* rewind — a filter on the hardware breakpoints that step back from a write.
 *
 * Stepping back from a watched write (the position just after it) means
 * finding the execution of one of the instructions that may have made it
 * (candidates) after which the write is done. Without this filter every
 * execution of a candidate stops the thread for the replayer to judge; a
 * store in a hot loop makes that thousands of stops, and the replayer
 * gives up. With it, the breakpoint's overflow handler computes where the
 * instruction is about to write, from its form (the replayer decodes it)
 * and the registers, and only an execution that writes the watched bytes,
 * or the execution past the limit, goes on to the SIGTRAP (see
 * register_match.bpf.c for the kernels that drop it). The replayer judges
 * the stops as before.
 *
 * One step back at a time per replayer: the forms, the watched range and
 * the limit are this object's global data, set before the breakpoints run.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "rewind_abi.h"

struct rw_write_form forms[RW_WRITE_FORMS] = {};
__u32 form_count = 0;
/* The watched bytes: [lo, hi). */
__u64 lo = 0;
__u64 hi = 0;
__u64 seen = 0;
__u64 last = 0;

/* The general registers by their user_regs_struct index, copied with
 * constant offsets (the verifier refuses a context read at a computed one). */
struct gprs {
	__u64 v[20];
};

static __always_inline void read_gprs(struct pt_regs *r, struct gprs *g)
{
	g->v[0] = r->r15;
	g->v[1] = r->r14;
	g->v[2] = r->r13;
	g->v[3] = r->r12;
	g->v[4] = r->bp;
	g->v[5] = r->bx;
	g->v[6] = r->r11;
	g->v[7] = r->r10;
	g->v[8] = r->r9;
	g->v[9] = r->r8;
	g->v[10] = r->ax;
	g->v[11] = r->cx;
	g->v[12] = r->dx;
	g->v[13] = r->si;
	g->v[14] = r->di;
	g->v[15] = 0; /* orig_rax */
	g->v[16] = r->ip;
	g->v[17] = 0; /* cs */
	g->v[18] = 0; /* eflags */
	g->v[19] = r->sp;
}

static __always_inline __u64 reg(const struct gprs *g, __s32 i)
{
	return i >= 0 && i < 20 ? g->v[i] : 0;
}

SEC("perf_event")
int match_write(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *r = &ctx->regs;
	struct gprs g;

	seen++;
	if (seen >= last)
		return 1;
	for (int k = 0; k < RW_WRITE_FORMS; k++) {
		struct rw_write_form *f = &forms[k];

		if (k >= form_count)
			break;
		if (f->ip != r->ip)
			continue;
		read_gprs(r, &g);
		__u64 at = (__u64)f->disp;
		if (f->base >= 0)
			at += reg(&g, f->base);
		if (f->index >= 0)
			at += reg(&g, f->index) * f->scale;
		__u64 len = f->size;
		if (f->times_rcx)
			len *= g.v[11] ? g.v[11] : 1;
		return at < hi && lo < at + len;
	}
	return 1; /* not a candidate the forms describe: the replayer judges */
}

char LICENSE[] SEC("license") = "GPL";
