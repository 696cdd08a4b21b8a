// SPDX-License-Identifier: GPL-2.0
/* rewind — a filter on the hardware breakpoint that finds a point in user
 * code again (a signal the recording delivered there).
 *
 * The point is an execution of its instruction with the recorded registers
 * where a few pages hold the recorded content: in a loop that counts in
 * memory, every round has the registers and only one the content. Without
 * this filter every execution stops the thread for the replayer to compare
 * (a ptrace round trip each, about 60 us here: minutes for a loop the
 * signal interrupted after millions of rounds). With it, the breakpoint's
 * overflow handler compares the registers and the pages' sum
 * (rw_page_sum_step) and only a match, or the execution past the limit,
 * goes on to the SIGTRAP (see register_match.bpf.c for the kernels that
 * drop it). A page it cannot read lets the trap through. The replayer
 * compares registers and the pages' digest again at the stop.
 *
 * One search at a time per replayer: what it wants is this object's global
 * data, set before the breakpoint is enabled.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "match_registers.bpf.h"
#include "rewind_abi.h"

/* In struct pt_regs' order (the first 21 words of user_regs_struct). */
__u64 want[21] = {};
__u64 pages[RW_SUM_PAGES] = {};
__u32 page_count = 0;
__u64 want_sum = 0;
__u64 seen = 0;
__u64 last = 0;

struct page_buffer {
	__u64 words[RW_PAGE_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct page_buffer);
} buffer SEC(".maps");

SEC("perf_event")
int match_position(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *r = &ctx->regs;
	__u32 zero = 0;
	struct page_buffer *b;
	__u64 h = 0;

	seen++;
	if (seen >= last)
		return 1;
	if (!registers_match(r, want))
		return 0;
	if (page_count == 0)
		return 1;
	b = bpf_map_lookup_elem(&buffer, &zero);
	if (!b)
		return 1;
	for (__u32 p = 0; p < RW_SUM_PAGES; p++) {
		if (p >= page_count)
			break;
		if (bpf_probe_read_user(b->words, sizeof(b->words), (const void *)pages[p]))
			return 1;
		h = rw_page_sum_step(h, pages[p]);
		for (__u32 w = 0; w < RW_PAGE_WORDS; w++)
			h = rw_page_sum_step(h, b->words[w]);
	}
	return h == want_sum;
}

char LICENSE[] SEC("license") = "GPL";
