// SPDX-License-Identifier: GPL-2.0
/* rewind — in-kernel capture of the recorded process tree.
 *
 * One hook per syscall, at sys_exit: it copies the user memory the syscall
 * read and wrote (as the shared syscall table describes it) into the ring
 * buffer, followed by the syscall record that closes the event. On x86-64
 * the arguments are still in pt_regs at exit. The sys_enter hook serves only
 * processes whose threads run one at a time: at a call that may block, the
 * thread gives the CPU up (RW_REC_YIELD), and when the call returns it is
 * stopped (RW_STALL_TURN) until the supervisor gives it the CPU again; every
 * other call runs through without a stop. Other processes leave it at its
 * first lookup. Processes recorded with --parallel run their threads freely
 * instead; uprobes on libc's synchronization functions (attached by the
 * recorder, on_sync_*) give their lock operations a place in the global
 * order. Forks are followed here, before the child runs. Whatever cannot be
 * captured completely is handed to the supervisor by stalling the thread
 * (see rw_stall in rewind_abi.h): nothing is ever dropped silently.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "rewind_abi.h"

#define RW_WALK_MAX_SEGMENTS		RW_BPF_MAX_SEGMENTS
#define RW_WALK_MAX_IOV			RW_BPF_MAX_SEGMENTS
#define RW_READ_USER(w, dst, size, src) bpf_probe_read_user((dst), (size), (const void *)(src))
/* The walk's `reader` points at the count, in the scratch map value. */
#define RW_WALK_COUNT(w) (*(__u32 *)(w)->reader)
/* And its status, in the word after the count. */
#define RW_WALK_STATUS(w) (((__u32 *)(w)->reader)[1])
/* Sizes kept in kernel state (below); what it cannot read here stalls the
 * thread, and the supervisor reads it from procfs. */
static __always_inline int state_size(__u32 state, __u64 key, __u64 *len);
#define RW_STATE_SIZE(w, state, key, len) state_size((state), (key), (len))
#include "buffer_walk.h"

char LICENSE[] SEC("license") = "GPL";

#define BPF_F_NO_PREALLOC_FLAG 1
#define MAP_ANONYMOUS_FLAG     0x20

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC_FLAG);
	__type(key, int);
	__type(value, struct rw_task_state);
} task_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RW_MAX_SYSCALL_NR);
	__type(key, __u32);
	__type(value, struct rw_sys_spec);
} specs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct rw_subcmd_key);
	__type(value, struct rw_sys_spec);
} subcmds SEC(".maps");

struct file_key {
	__u64 dev;
	__u64 ino;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct file_key);
	__type(value, struct rw_file_identity);
} known_files SEC(".maps");

/* Files whose content the trace holds and that nobody has open for
 * writing: reads of them are recorded by reference (struct rw_read_copy
 * says how an entry comes and goes). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, struct rw_read_copy);
} read_copies SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, struct rw_stall);
} stalls SEC(".maps");

/* Processes whose threads run one at a time (tgid -> RW_SERIALIZED, or
 * RW_SERIALIZED_EVERY_CALL where every call hands the CPU over), kept by
 * the supervisor. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} serialized SEC(".maps");

/* Threads whose current call the supervisor answers itself (a recorded
 * tracer's ptrace request, a wait that reports a stop it emulates): the
 * call stops at its return (RW_STALL_VIEW) whatever it returned. Set by
 * the supervisor at the call's entry, removed here. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} answered_calls SEC(".maps");

/* Each thread's blocked signals after its last call that changes them
 * (RW_VIEW_SIGNAL_MASK); least recently used entries go first, so the
 * threads that ended leave no trace. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __u64);
} signal_masks SEC(".maps");

/* The call a thread's next restart_syscall continues, by thread: one that
 * returned -ERESTART_RESTARTBLOCK (the kernel restarts it so when no
 * handler runs: poll, nanosleep, futex with a timeout), or, for a thread
 * of a process rewind attached to, the call it was in (set by the
 * recorder). The restarted call writes that call's outputs (poll's
 * revents), which are captured with its buffer description; its arguments
 * are still in the registers. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, __s32);
} restarted_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26); /* resized by userspace before load */
} rb SEC(".maps");

struct scratch {
	__u32 nsegs;	   /* the walk's count of segments (RW_WALK_COUNT), */
	__u32 walk_status; /* and its status (RW_WALK_STATUS): they stay together */
	__u32 copy_seg;	   /* copy_one_chunk: the segment being copied, */
	__u32 copy_failed; /* why copying stopped (enum rw_stall_reason; 0: all well), */
	__u64 copy_off;	   /* and how far into that segment it is */
	__u64 size_bytes, size_chunks; /* add_segment_size: what the segments need */
	struct rw_rec_syscall sc;
	struct rw_sys_spec spec;
	struct rw_segment segs[RW_BPF_MAX_SEGMENTS];
	struct rw_stall stall;
	/* dh and data must stay adjacent: they leave as one ring record */
	struct rw_rec_data dh;
	__u8 data[RW_CHUNK_BYTES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct scratch);
} scratch_map SEC(".maps");

const volatile struct rw_config cfg = {};

#include "capture_ids.bpf.h"

/* Units per second of syscall exit times, set once recording starts: the
 * trace's end says it. (Recordings before these units carried the
 * kernel's jiffies, 4 ms apart at 250 Hz: the whole of a short run in one
 * or two ticks.) */
__u32 kernel_hz = 0;

/* Global event order, shared with the supervisor through the mmaped .bss. */
__u64 seq_counter = 0;
/* Ring records the kernel refused; must stay 0 (every refusal stalls). */
__u64 ring_refusals = 0;

/* When the consumer was last woken (bpf_ktime_get_ns), by any CPU. */
__u64 last_wakeup_ns = 0;

/* Wake the consumer once enough is pending, but not at every record: a
 * wake-up is an interrupt raised through the APIC, a VM exit on a guest,
 * and while the consumer lags behind a fast producer every record found
 * more than enough pending (8 threads reading a file spent a quarter of
 * their time raising them). The consumer also polls every 20 ms. */
#define RW_WAKEUP_EVERY_NS 1000000

static __always_inline __u64 ring_flags(void)
{
	__u64 pending = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	__u64 now;

	if (pending < cfg.wakeup_bytes)
		return BPF_RB_NO_WAKEUP;
	now = bpf_ktime_get_ns();
	if (now - last_wakeup_ns < RW_WAKEUP_EVERY_NS)
		return BPF_RB_NO_WAKEUP;
	last_wakeup_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

static __always_inline struct rw_task_state *state_of_current(void)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return bpf_task_storage_get(&task_state, task, 0, 0);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	struct rw_task_state *pst = bpf_task_storage_get(&task_state, parent, 0, 0);
	struct rw_task_state *cst;
	struct rw_rec_fork rec = {};

	if (!pst || pst->phase == RW_TASK_UNTRACKED)
		return 0;
	cst = bpf_task_storage_get(&task_state, child, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!cst) {
		/* Cannot follow this child: the supervisor sees it through
		 * ptrace and marks the trace incomplete. */
		return 0;
	}
	/* The child's first event is its return from the same syscall. */
	cst->phase = pst->phase;
	cst->child_return = 1;
	if (pst->phase != RW_TASK_ACTIVE)
		return 0;
	rec.h.kind = RW_REC_FORK;
	rec.h.tid = task_tid(parent);
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.parent_tgid = task_tgid(parent);
	rec.child_tid = task_tid(child);
	rec.child_tgid = task_tgid(child);
	rec.ktime_ns = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&rb, &rec, sizeof(rec), ring_flags()))
		__sync_fetch_and_add(&ring_refusals, 1);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct rw_task_state *st = bpf_task_storage_get(&task_state, p, 0, 0);

	/* Recording starts when the launcher becomes the program. */
	if (st && st->phase == RW_TASK_WAIT_EXEC) {
		st->phase = RW_TASK_ACTIVE;
		kernel_hz = 1000000000 / RW_EXIT_TIME_UNIT_NS;
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p, bool group_dead)
{
	struct rw_task_state *st = bpf_task_storage_get(&task_state, p, 0, 0);
	struct rw_rec_exit rec = {};

	if (!st || st->phase != RW_TASK_ACTIVE)
		return 0;
	rec.h.kind = RW_REC_EXIT;
	rec.h.tid = task_tid(p);
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.tgid = task_tgid(p);
	rec.exit_code = BPF_CORE_READ(p, exit_code);
	rec.group_exit_code = BPF_CORE_READ(p, signal, group_exit_code);
	rec.group_dead = group_dead;
	rec.ktime_ns = bpf_ktime_get_ns();
	/* The syscall the thread is in (exit_group, or one a signal killed it
	 * in), from the registers it entered the kernel with. */
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(p);
	rec.pending_nr = (__s32)BPF_CORE_READ(regs, orig_ax);
	rec.pending_args[0] = BPF_CORE_READ(regs, di);
	rec.pending_args[1] = BPF_CORE_READ(regs, si);
	rec.pending_args[2] = BPF_CORE_READ(regs, dx);
	rec.pending_args[3] = BPF_CORE_READ(regs, r10);
	rec.pending_args[4] = BPF_CORE_READ(regs, r8);
	rec.pending_args[5] = BPF_CORE_READ(regs, r9);
	if (bpf_ringbuf_output(&rb, &rec, sizeof(rec), ring_flags()))
		__sync_fetch_and_add(&ring_refusals, 1);
	return 0;
}

/* Hands the current syscall to the supervisor and stops the thread before
 * it returns to user mode, so its memory still holds what the kernel wrote. */
static __always_inline void stall(struct scratch *s, __u32 reason)
{
	__u32 tid = s->sc.h.tid;

	s->stall.reason = reason;
	s->stall.tgid = s->sc.tgid;
	s->stall.seq = s->sc.h.seq;
	s->stall.sc = s->sc;
	if (bpf_map_update_elem(&stalls, &tid, &s->stall, BPF_ANY)) {
		/* No room to describe the stall: the supervisor still sees the
		 * stop and, finding no entry, marks the trace incomplete here. */
		__sync_fetch_and_add(&ring_refusals, 1);
	}
	bpf_send_signal_thread(RW_STALL_SIGNAL);
}

/* A pointer read out of kernel memory, as a typed one whose fields are
 * plain (fault-checked) loads rather than a bpf_probe_read_kernel each. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;
#define TYPED(type, ptr) ((type *)bpf_rdonly_cast((ptr), bpf_core_type_id_kernel(type)))

#include "capture_files.bpf.h"

/* The context of the bpf_loop callbacks below (it must be on the stack).
 * What they count and sum lives in the scratch map value, for the reason
 * RW_WALK_COUNT does: state on the stack differs at each round, and the
 * verifier explores them all. */
struct scratch_ref {
	struct scratch *s;
};

/* Chunks of at least RW_DIRECT_MIN bytes are read from user memory straight
 * into a ring reservation: going through the scratch area copied every byte
 * twice (a tenth of all the time of a recording of 8 threads reading files).
 * A reservation's size must be a constant, so it is the smallest of a few
 * sizes that holds the chunk (the rest of it is padding, under half). */
#define RW_DIRECT_MIN 1024

static __always_inline __u64 chunk_ring_bytes(__u64 n)
{
	if (n < RW_DIRECT_MIN)
		return n;
	if (n <= 1024)
		return 1024;
	if (n <= 2048)
		return 2048;
	if (n <= 4096)
		return 4096;
	if (n <= 8192)
		return 8192;
	return RW_CHUNK_BYTES;
}

#define RESERVE_AND_READ(size)                                                                     \
	do {                                                                                       \
		struct rw_rec_data *r =                                                            \
			bpf_ringbuf_reserve(&rb, sizeof(struct rw_rec_data) + (size), 0);          \
		if (!r)                                                                            \
			return RW_STALL_RING_FULL;                                                 \
		if (n > (size))                                                                    \
			n = (size);                                                                \
		*r = s->dh;                                                                        \
		r->len = n;                                                                        \
		if (bpf_probe_read_user((void *)(r + 1), n, (const void *)s->dh.addr)) {           \
			bpf_ringbuf_discard(r, BPF_RB_NO_WAKEUP);                                  \
			return RW_STALL_READ_FAULT;                                                \
		}                                                                                  \
		bpf_ringbuf_submit(r, ring_flags());                                               \
		return 0;                                                                          \
	} while (0)

/* n >= RW_DIRECT_MIN: one constant-size branch per size chunk_ring_bytes
 * gives (add_segment_size counts the ring's room with the same function). */
static __always_inline long read_chunk_into_ring(struct scratch *s, __u64 n)
{
	switch (chunk_ring_bytes(n)) {
	case 1024:
		RESERVE_AND_READ(1024);
	case 2048:
		RESERVE_AND_READ(2048);
	case 4096:
		RESERVE_AND_READ(4096);
	case 8192:
		RESERVE_AND_READ(8192);
	default:
		RESERVE_AND_READ(RW_CHUNK_BYTES);
	}
}

static long copy_one_chunk(__u32 index, void *data)
{
	struct scratch_ref *c = data;
	struct scratch *s = c->s;
	struct rw_segment *seg;
	__u32 i = s->copy_seg;
	__u64 remaining;
	long n;

	if (i >= RW_BPF_MAX_SEGMENTS)
		return 1;
	seg = &s->segs[i];
	s->dh.h.kind = RW_REC_DATA;
	s->dh.h.flags = 0;
	s->dh.h.tid = s->sc.h.tid;
	s->dh.h.seq = s->sc.h.seq;
	s->dh.addr = seg->addr + s->copy_off;
	s->dh.buf_index = seg->buf_index;
	s->dh.dir_flags = seg->dir;

	if (seg->seg_flags & RW_SEG_STRING) {
		n = bpf_probe_read_user_str(s->data, RW_MAX_STRING, (const void *)seg->addr);
		if (n < 0) {
			s->copy_failed = RW_STALL_READ_FAULT;
			return 1;
		}
		remaining = 0;
	} else {
		remaining = seg->len - s->copy_off;
		n = remaining > RW_CHUNK_BYTES ? RW_CHUNK_BYTES : remaining;
		n &= (RW_CHUNK_BYTES * 2 - 1); /* bound for the verifier */
		if (n > RW_CHUNK_BYTES)
			n = RW_CHUNK_BYTES;
		if (n >= RW_DIRECT_MIN) {
			long failed = read_chunk_into_ring(s, n);

			if (failed) {
				s->copy_failed = failed;
				return 1;
			}
			goto next;
		}
		if (bpf_probe_read_user(s->data, n, (const void *)s->dh.addr)) {
			s->copy_failed = RW_STALL_READ_FAULT;
			return 1;
		}
	}
	s->dh.len = n;
	if (bpf_ringbuf_output(&rb, &s->dh, sizeof(s->dh) + n, ring_flags())) {
		s->copy_failed = RW_STALL_RING_FULL;
		return 1;
	}
next:
	if ((__u64)n >= remaining) {
		s->copy_seg = i + 1;
		s->copy_off = 0;
	} else {
		s->copy_off += n;
	}
	return 0;
}

static long add_segment_size(__u32 index, void *data)
{
	struct scratch *s = ((struct scratch_ref *)data)->s;
	__u64 len;

	if (index >= RW_BPF_MAX_SEGMENTS)
		return 1;
	len = s->segs[index].len;
	/* As copy_one_chunk reserves them: whole chunks, then the last one. */
	s->size_bytes +=
		(len / RW_CHUNK_BYTES) * RW_CHUNK_BYTES + chunk_ring_bytes(len % RW_CHUNK_BYTES);
	s->size_chunks += (len + RW_CHUNK_BYTES - 1) / RW_CHUNK_BYTES;
	return 0;
}

struct walk_ctx {
	struct rw_walk *walk;
	struct scratch *s;
};

/* One buffer per iteration: the verifier checks the walker once. */
static long walk_one_buffer(__u32 index, void *data)
{
	struct walk_ctx *c = data;

	if (index >= RW_MAX_BUFS)
		return 1;
	rw_walk_buffer(c->walk, &c->s->spec.bufs[index], (__u8)index);
	return RW_WALK_STATUS(c->walk) ? 1 : 0;
}

static __always_inline const struct rw_sys_spec *effective_spec(struct scratch *s, __u32 nr,
								const struct rw_sys_spec *spec)
{
	struct rw_subcmd_key key = {};
	const struct rw_sys_spec *sub;
	__u64 value;

	if (!(spec->flags & RW_SYS_DISPATCH))
		return spec;
	value = s->sc.args[spec->dispatch_arg < RW_MAX_ARGS ? spec->dispatch_arg : 0];
	if (spec->dispatch_mask_bits)
		value &= (1ull << (spec->dispatch_mask_bits & 63)) - 1;
	key.nr = nr;
	key.value = value;
	sub = bpf_map_lookup_elem(&subcmds, &key);
	if (sub)
		return sub;
	/* An ioctl whose number encodes its size describes itself. */
	if (spec->nbufs && spec->bufs[0].kind == RW_SZ_IOCTL && RW_IOC_DIR(value))
		return spec;
	s->sc.h.flags |= RW_SC_UNKNOWN_SUBCMD;
	return 0;
}

/* Whether the call may block, as the syscall table says (syscall_table.h:
 * Blocking). Unknown calls may. With `any_fd` (--chaos, which hands the
 * CPU over as often as it can) a call that blocks on some descriptors
 * counts whatever its descriptor. */
static __always_inline int may_block(struct pt_regs *regs, long id, int any_fd)
{
	const struct rw_sys_spec *spec, *sub;
	struct rw_subcmd_key key = {};
	__u32 nr = (__u32)id;
	__u64 args[RW_MAX_ARGS];
	__u8 flags;

	spec = nr < RW_MAX_SYSCALL_NR ? bpf_map_lookup_elem(&specs, &nr) : 0;
	if (!spec || !(spec->flags & RW_SYS_KNOWN))
		return 1;
	flags = spec->flags;
	if (flags & RW_SYS_DISPATCH) {
		args[0] = regs->di;
		args[1] = regs->si;
		args[2] = regs->dx;
		args[3] = regs->r10;
		args[4] = regs->r8;
		args[5] = regs->r9;
		key.nr = nr;
		key.value = args[spec->dispatch_arg < RW_MAX_ARGS ? spec->dispatch_arg : 0];
		if (spec->dispatch_mask_bits)
			key.value &= (1ull << (spec->dispatch_mask_bits & 63)) - 1;
		sub = bpf_map_lookup_elem(&subcmds, &key);
		if (sub)
			flags = sub->flags;
	}
	if (flags & RW_SYS_MAY_BLOCK)
		return 1;
	if (flags & RW_SYS_BLOCKS_ON_FD)
		return any_fd || fd_may_block(regs->di);
	return 0;
}

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	struct rw_task_state *st = state_of_current();
	struct rw_rec_yield rec = {};
	__u64 pid_tgid;
	__u32 tgid, *mode;

	if (!st || st->phase != RW_TASK_ACTIVE)
		return 0;
	st->entry_nr = (__s32)id;
	/* The trampoline of a uretprobe (--parallel's probes) returns through
	 * a syscall of its own: it is ours, not the program's, and replay,
	 * which has no probes, does not make it. */
	if (id == RW_NR_URETPROBE) {
		st->in_uretprobe = 1;
		return 0;
	}
	pid_tgid = current_pid_tgid();
	tgid = pid_tgid >> 32;
	/* The thread's running time: from each call's return to the next
	 * call's entry (what a call's exit_time carries; not the time a call
	 * blocked, a read from a pipe, a wait for a child). */
	if (st->last_exit_ns) {
		st->user_ns += bpf_ktime_get_ns() - st->last_exit_ns;
		st->last_exit_ns = 0;
	}
	mode = bpf_map_lookup_elem(&serialized, &tgid);
	if (!mode || !may_block(regs, id, *mode == RW_SERIALIZED_EVERY_CALL))
		return 0;
	rec.h.kind = RW_REC_YIELD;
	rec.h.tid = (__u32)pid_tgid;
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.tgid = tgid;
	rec.nr = (__s32)id;
	/* The supervisor hands the CPU to another thread as soon as it reads
	 * this: wake it now. */
	if (bpf_ringbuf_output(&rb, &rec, sizeof(rec), BPF_RB_FORCE_WAKEUP)) {
		/* The thread keeps the CPU; the trace is marked incomplete. */
		__sync_fetch_and_add(&ring_refusals, 1);
		return 0;
	}
	st->released = 1;
	return 0;
}

#include "capture_sync.bpf.h"

/* Every process's calls that open a file (note_open). */
static __always_inline void note_open_return(struct pt_regs *regs, long ret)
{
	__u32 nr = (__u32)regs->orig_ax;
	const struct rw_sys_spec *spec;

	if (nr >= RW_MAX_SYSCALL_NR)
		return;
	spec = bpf_map_lookup_elem(&specs, &nr);
	if (spec && (spec->flags & RW_SYS_OPENS_FILE))
		note_open(ret);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	struct rw_task_state *st = state_of_current();
	const struct rw_sys_spec *spec;
	struct scratch_ref ref = {};
	struct rw_walk walk = {};
	struct scratch *s;
	__u32 zero = 0, nr;
	__u64 chunks;
	__u64 need = 0, ring_size, pending;
	__u32 turn;
	int shares = 0;

	if (ret >= 0)
		note_open_return(regs, ret);
	if (!st || st->phase != RW_TASK_ACTIVE)
		return 0;
	if (st->in_uretprobe) {
		st->in_uretprobe = 0;
		return 0;
	}
	s = bpf_map_lookup_elem(&scratch_map, &zero);
	if (!s)
		return 0;
	/* Gave the CPU up at the entry: whatever else happens below, the
	 * thread stops before it returns to user mode (every stall does). */
	turn = st->released;
	st->released = 0;

	__u64 pid_tgid = current_pid_tgid();
	s->sc.h.kind = RW_REC_SYSCALL;
	s->sc.h.flags = 0;
	s->sc.h.tid = (__u32)pid_tgid;
	s->sc.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	s->sc.tgid = pid_tgid >> 32;
	s->sc.ret = ret;
	/* regs is a trusted BTF pointer: plain loads, no helper calls. */
	s->sc.ip = regs->ip;
	s->sc.sp = regs->sp;
	/* 0 says "no time": the thread's first 250 us are 1. */
	s->sc.exit_time = st->user_ns / RW_EXIT_TIME_UNIT_NS + 1;
	st->last_exit_ns = bpf_ktime_get_ns();
	s->sc.nr = (__s32)regs->orig_ax;
	s->sc.args[0] = regs->di;
	s->sc.args[1] = regs->si;
	s->sc.args[2] = regs->dx;
	s->sc.args[3] = regs->r10;
	s->sc.args[4] = regs->r8;
	s->sc.args[5] = regs->r9;
	__builtin_memset(&s->sc.file, 0, sizeof(s->sc.file));
	s->sc.file_offset = 0;
	/* rt_sigreturn leaves orig_ax at -1 (it restores a context whose
	 * orig_ax it clears); a program's own syscall(-1) has -1 from its
	 * entry on: the number it entered with tells them apart. */
	if (s->sc.nr == -1 && st->entry_nr == RW_NR_RT_SIGRETURN)
		s->sc.nr = RW_NR_RT_SIGRETURN;
	/* A 64-bit image an exec loaded starts with orig_ax at execve's number
	 * (set_personality_64bit), whichever call loaded it. */
	if (s->sc.nr == RW_NR_EXECVE && st->entry_nr == RW_NR_EXECVEAT)
		s->sc.nr = RW_NR_EXECVEAT;
	if (st->child_return) {
		s->sc.h.flags |= RW_SC_CHILD_RETURN;
		st->child_return = 0;
	}
	if (st->sync_depth && !inside_marker_call(st))
		s->sc.h.flags |= RW_SC_IN_SYNC;

	nr = (__u32)s->sc.nr;
	{
		__u32 tid = (__u32)pid_tgid;

		if (ret == RW_ERESTART_RESTARTBLOCK) {
			__s32 restarted = s->sc.nr;

			bpf_map_update_elem(&restarted_calls, &tid, &restarted, BPF_ANY);
		} else if (nr == RW_NR_RESTART_SYSCALL) {
			__s32 *restarted = bpf_map_lookup_elem(&restarted_calls, &tid);

			if (restarted && *restarted >= 0)
				nr = (__u32)*restarted; /* its outputs, under restart_syscall's number */
			bpf_map_delete_elem(&restarted_calls, &tid);
		}
	}
	spec = nr < RW_MAX_SYSCALL_NR ? bpf_map_lookup_elem(&specs, &nr) : 0;
	if (!spec || !(spec->flags & RW_SYS_KNOWN)) {
		s->sc.h.flags |= RW_SC_UNKNOWN;
		goto emit;
	}
	if ((spec->flags & RW_SYS_MAPS_FILE) && ret >= 0 && !(s->sc.args[3] & MAP_ANONYMOUS_FLAG))
		capture_file_identity(s, s->sc.args[4]);
	shares = rw_shares_memory(spec, ret, s->sc.args[3]);
	spec = effective_spec(s, nr, spec);
	if (!spec)
		goto emit;
	if (spec->view == RW_VIEW_ANSWERED) {
		__u32 tid = (__u32)pid_tgid;

		if (bpf_map_lookup_elem(&answered_calls, &tid)) {
			bpf_map_delete_elem(&answered_calls, &tid);
			stall(s, RW_STALL_VIEW);
			return 0;
		}
	} else if (spec->view == RW_VIEW_SIGNAL_MASK) {
		struct task_struct *task = bpf_get_current_task_btf();
		__u32 tid = (__u32)pid_tgid;
		__u64 blocked = task->blocked.sig[0];

		bpf_map_update_elem(&signal_masks, &tid, &blocked, BPF_ANY);
	} else if (spec->view == RW_VIEW_WRITES_PROCESS) {
		/* Its outputs are the caller's memory only if it wrote there. */
		if (ret > 0 && s->sc.args[0] != (pid_tgid >> 32)) {
			stall(s, RW_STALL_PROCESS_MEMORY);
			return 0;
		}
	} else if (spec->view && spec->view != RW_VIEW_SHARES_MEMORY && ret >= 0) {
		stall(s, RW_STALL_VIEW);
		return 0;
	}
	if ((spec->flags & RW_SYS_WRITES_FILE) && ret >= 0)
		note_mapped_write(s, spec, ret);
	if ((spec->flags & RW_SYS_READS_FILE) && ret > 0 && read_by_reference(s, spec, ret))
		goto emit;

	if (!spec->nbufs)
		goto emit;
	/* Copy the spec out of the map so the walker reads stable memory. */
	s->spec = *spec;
	walk.args = s->sc.args;
	walk.ret = ret;
	walk.segs = s->segs;
	walk.reader = &s->nsegs;
	s->nsegs = 0;
	s->walk_status = RW_WALK_OK;
	struct walk_ctx wc = {.walk = &walk, .s = s};
	if (s->spec.nbufs)
		bpf_loop(s->spec.nbufs < RW_MAX_BUFS ? s->spec.nbufs : RW_MAX_BUFS, walk_one_buffer,
			 &wc, 0);
	if ((s->spec.flags & RW_SYS_WRITES_FILE) && ret > 0) {
		/* A write through /proc/PID/mem: into the writer's own memory,
		 * the bytes are an output there (where the file offset says),
		 * which replay restores; into another process's, the supervisor
		 * records where. */
		struct file *mem = proc_mem_written(s);

		if (mem && is_own_memory(mem)) {
			__u64 at = write_offset(s, &s->spec, mem, ret);

			if (at)
				rw_push(&walk, at, ret, s->spec.nbufs, RW_BUF_OUT, 0);
		} else if (mem) {
			stall(s, RW_STALL_PROCESS_MEMORY);
			return 0;
		}
	}
	if (s->walk_status) {
		/* The supervisor reads what the walk could not (a fault, too
		 * many pieces, a size kept in kernel state). */
		stall(s,
		      s->walk_status == RW_WALK_FAULT ? RW_STALL_READ_FAULT : RW_STALL_TOO_COMPLEX);
		return 0;
	}

	if (!s->nsegs)
		goto emit;
	/* Refuse to start an event the ring cannot hold whole. */
	s->size_bytes = 0;
	s->size_chunks = 0;
	ref.s = s;
	bpf_loop(s->nsegs, add_segment_size, &ref, 0);
	chunks = s->size_chunks;
	need = s->size_bytes + chunks * (sizeof(struct rw_rec_data) + 8) +
	       sizeof(struct rw_rec_syscall) + 8;
	ring_size = bpf_ringbuf_query(&rb, BPF_RB_RING_SIZE);
	pending = bpf_ringbuf_query(&rb, BPF_RB_AVAIL_DATA);
	if (pending + need > ring_size) {
		stall(s, RW_STALL_RING_FULL);
		return 0;
	}
	s->copy_seg = 0;
	s->copy_off = 0;
	s->copy_failed = 0;
	bpf_loop(chunks, copy_one_chunk, &ref, 0);
	if (s->copy_failed) {
		stall(s, s->copy_failed);
		return 0;
	}

emit:
	if (bpf_ringbuf_output(&rb, &s->sc, sizeof(s->sc), ring_flags())) {
		stall(s, RW_STALL_RING_FULL);
		return 0;
	}
	if ((s->sc.h.flags & RW_SC_FILE) && !file_is_known(s))
		stall(s, RW_STALL_COPY_FILE);
	else if (shares)
		stall(s, RW_STALL_SHARED_MAP);
	else if (turn)
		stall(s, RW_STALL_TURN);
	return 0;
}
