// SPDX-License-Identifier: GPL-2.0
/* rewind — a filter on the hardware breakpoint that names an anchor.
 *
 * Naming an anchor (a snapshot the replay took where an alarm stopped it)
 * means finding the execution of its instruction at which the thread's
 * registers are the snapshot's. Without this filter every execution stops
 * the thread for the replayer to compare (a ptrace round trip each); with
 * it, the comparison runs in the breakpoint's overflow handler and only a
 * match, or the execution past the limit, goes on to the SIGTRAP (kernels
 * from 6.10 drop a sample's side effects when its program returns 0;
 * older ones deliver every trap, and the replayer compares each as
 * before). The replayer compares the whole register set again at the
 * stop: this filter only keeps the other executions from stopping.
 *
 * One label at a time per replayer: the wanted registers and the limit are
 * this object's global data, set before the breakpoint is enabled.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "match_registers.bpf.h"

/* In struct pt_regs' order (the first 21 words of user_regs_struct). */
__u64 want[21] = {};
/* Executions the filter has seen, and the one at which it lets the trap
 * through whatever the registers are. */
__u64 seen = 0;
__u64 last = 0;

SEC("perf_event")
int match_registers(struct bpf_perf_event_data *ctx)
{
	struct pt_regs *r = &ctx->regs;

	seen++;
	if (seen >= last)
		return 1;
	return registers_match(r, want);
}

char LICENSE[] SEC("license") = "GPL";
