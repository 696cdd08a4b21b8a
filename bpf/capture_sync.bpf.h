/* The capture program's probes of libc's synchronization calls (record
 * --parallel): their entries and returns, in the ring as sync records. Part
 * of capture.bpf.c, which includes it where its maps and helpers are
 * defined. */
#ifndef REWIND_CAPTURE_SYNC_BPF_H
#define REWIND_CAPTURE_SYNC_BPF_H


/* Which calls release (their seq is taken at entry: whatever the thread did
 * before is visible to a thread that acquires after) and which acquire
 * (taken at return: the thread goes on after every earlier release).
 * pthread_once and pthread_create only mark where they start: what they do
 * inside (the initializer, the clone) is recorded as events of its own. */
#define SYNC_BIT(fn) (1u << (fn))
#define SYNC_RELEASES                                                                              \
	(SYNC_BIT(RW_SYNC_MUTEX_UNLOCK) | SYNC_BIT(RW_SYNC_RWLOCK_UNLOCK) |                        \
	 SYNC_BIT(RW_SYNC_COND_WAIT) | SYNC_BIT(RW_SYNC_COND_TIMEDWAIT) |                          \
	 SYNC_BIT(RW_SYNC_COND_SIGNAL) | SYNC_BIT(RW_SYNC_COND_BROADCAST) |                        \
	 SYNC_BIT(RW_SYNC_SEM_POST) | SYNC_BIT(RW_SYNC_BARRIER_WAIT) |                             \
	 SYNC_BIT(RW_SYNC_SPIN_UNLOCK) | SYNC_BIT(RW_SYNC_CREATE) | SYNC_BIT(RW_SYNC_ONCE))
#define SYNC_ACQUIRES                                                                              \
	(~SYNC_RELEASES | SYNC_BIT(RW_SYNC_COND_WAIT) | SYNC_BIT(RW_SYNC_COND_TIMEDWAIT) |         \
	 SYNC_BIT(RW_SYNC_BARRIER_WAIT))

static __always_inline void emit_sync(__u32 fn, __u32 flags, __u64 object, __u64 entry, __s64 ret)
{
	__u64 pid_tgid = current_pid_tgid();
	struct rw_rec_sync rec = {};

	rec.h.kind = RW_REC_SYNC;
	rec.h.flags = flags;
	rec.h.tid = (__u32)pid_tgid;
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.tgid = pid_tgid >> 32;
	rec.fn = fn;
	rec.object = object;
	rec.entry = entry;
	rec.ret = ret;
	if (bpf_ringbuf_output(&rb, &rec, sizeof(rec), ring_flags()))
		__sync_fetch_and_add(&ring_refusals, 1);
}

/* The uprobes are attached for every process mapping that libc; only
 * recorded threads go further than the lookup. The attach cookie is the
 * function (enum rw_sync_fn). */
SEC("uprobe")
int on_sync_entry(struct pt_regs *ctx)
{
	struct rw_task_state *st = state_of_current();
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);
	__u64 object = PT_REGS_PARM1(ctx);
	__u64 entry = bpf_get_func_ip(ctx);
	__u32 depth;

	if (!st || st->phase != RW_TASK_ACTIVE || fn >= RW_SYNC_FN_COUNT)
		return 0;
	depth = st->sync_depth;
	if (depth < RW_SYNC_MAX_DEPTH) {
		st->sync[depth].object = object;
		st->sync[depth].entry = entry;
		st->sync[depth].fn = fn;
	}
	/* Past the deepest frame only the depth is kept: the return finds no
	 * frame and emits nothing, which replay reports as a divergence. */
	if (depth < 64)
		st->sync_depth = depth + 1;
	if (SYNC_RELEASES & SYNC_BIT(fn))
		emit_sync(fn, RW_SYNC_RELEASE, object, entry, 0);
	return 0;
}

SEC("uretprobe")
int on_sync_return(struct pt_regs *ctx)
{
	struct rw_task_state *st = state_of_current();
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);
	__u32 depth;

	if (!st || st->phase != RW_TASK_ACTIVE || fn >= RW_SYNC_FN_COUNT || !st->sync_depth)
		return 0;
	depth = --st->sync_depth;
	if (depth >= RW_SYNC_MAX_DEPTH || st->sync[depth].fn != fn)
		return 0;
	if (SYNC_ACQUIRES & SYNC_BIT(fn))
		emit_sync(fn, RW_SYNC_ACQUIRE, st->sync[depth].object, st->sync[depth].entry,
			  (__s64)PT_REGS_RC(ctx));
	return 0;
}

/* Whether the innermost synchronization call is one that only marks where
 * it starts (once, create): its syscalls are the program's own events. */
static __always_inline int inside_marker_call(struct rw_task_state *st)
{
	__u32 d = st->sync_depth - 1;
	__u32 fn;

	if (d >= RW_SYNC_MAX_DEPTH)
		return 0;
	fn = st->sync[d].fn;
	return fn == RW_SYNC_ONCE || fn == RW_SYNC_CREATE;
}

#endif /* REWIND_CAPTURE_SYNC_BPF_H */
