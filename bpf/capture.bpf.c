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
/* Sizes kept in kernel state (below); what it cannot read here stalls the
 * thread, and the supervisor reads it from procfs. */
static __always_inline int state_size(__u32 state, __u64 key, __u64 *len);
#define RW_STATE_SIZE(w, state, key, len) state_size((state), (key), (len))
#include "buffer_walk.h"

char LICENSE[] SEC("license") = "GPL";

#define BPF_F_NO_PREALLOC_FLAG 1
#define MAP_ANONYMOUS_FLAG     0x20
#define MAP_SHARED_FLAG	       0x01
#define MMAP_NR		       9

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

/* Files whose content the trace holds and that the recorder keeps a read
 * lease on (nobody has them open for writing): reads of them are recorded
 * by reference. The recorder removes an entry before anyone may write. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, struct rw_file_identity);
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

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 26); /* resized by userspace before load */
} rb SEC(".maps");

struct scratch {
	__u32 nsegs;	   /* the walk's count of segments (RW_WALK_COUNT) */
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
	rec.h.tid = BPF_CORE_READ(parent, pid);
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.parent_tgid = BPF_CORE_READ(parent, tgid);
	rec.child_tid = BPF_CORE_READ(child, pid);
	rec.child_tgid = BPF_CORE_READ(child, tgid);
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
	rec.h.tid = BPF_CORE_READ(p, pid);
	rec.h.seq = __sync_fetch_and_add(&seq_counter, 1);
	rec.tgid = BPF_CORE_READ(p, tgid);
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

/* The current task's open file at descriptor `fd`; NULL if there is none,
 * and *unreadable set if its descriptor table could not be read. */
static __always_inline struct file *file_of_fd(__u64 fd, int *unreadable)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct fdtable *fdt = task->files->fdt;
	struct file *raw = 0;

	*unreadable = 0;
	if (!fdt || fd >= fdt->max_fds)
		return 0;
	if (bpf_probe_read_kernel(&raw, sizeof(raw), &fdt->fd[fd])) {
		*unreadable = 1;
		return 0;
	}
	return raw ? TYPED(struct file, raw) : 0;
}

static __always_inline void fill_file_identity(struct scratch *s, struct inode *inode)
{
	s->sc.file.dev = inode->i_sb->s_dev;
	s->sc.file.ino = inode->i_ino;
	s->sc.file.size = inode->i_size;
	s->sc.file.mtime_ns = inode->i_mtime_sec * 1000000000ll + inode->i_mtime_nsec;
}

static __always_inline void capture_file_identity(struct scratch *s, __u64 fd)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);

	if (!file)
		return;
	fill_file_identity(s, file->f_inode);
	s->sc.h.flags |= RW_SC_FILE;
}

#define O_NONBLOCK_FLAG	  04000
#define S_IFMT_BITS	  0170000
#define S_IFREG_BITS	  0100000
#define S_IFDIR_BITS	  0040000
#define S_IFBLK_BITS	  0060000
#define S_IFCHR_BITS	  0020000
#define MEM_MAJOR	  1 /* /dev/null, /dev/zero, /dev/urandom… */
#define KERNEL_MINOR_BITS 20

/* Whether I/O on descriptor `fd` of the current task can wait for another
 * thread: anything but a regular file, a directory, a block device, a
 * memory device, or a descriptor in non-blocking mode. */
static __always_inline int fd_may_block(__u64 fd)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);
	struct inode *inode;
	__u32 mode;

	if (!file)
		return unreadable; /* else EBADF at once */
	if (file->f_flags & O_NONBLOCK_FLAG)
		return 0;
	inode = file->f_inode;
	mode = inode->i_mode & S_IFMT_BITS;
	if (mode == S_IFREG_BITS || mode == S_IFDIR_BITS || mode == S_IFBLK_BITS)
		return 0;
	if (mode == S_IFCHR_BITS && (inode->i_rdev >> KERNEL_MINOR_BITS) == MEM_MAJOR)
		return 0;
	return 1;
}

/* A BPF map's descriptor is an anonymous inode's file named so
 * (bpf_map_new_fd): "bpf-map" and its NUL, as a little-endian u64. */
#define BPF_MAP_FILE_NAME   0x0070616d2d667062ull
#define ANON_INODE_FS_MAGIC 0x09041934

/* What the kernel copies in or out for a key or a value of the BPF map at
 * descriptor `fd` (bpf_map_value_size in kernel/bpf/syscall.c): a slot for
 * every possible CPU in a per-CPU map, an id in a map of descriptors. */
static __always_inline int bpf_map_sizes(__u32 state, __u64 fd, __u64 *len)
{
	int unreadable;
	struct file *file = file_of_fd(fd, &unreadable);
	struct bpf_map *map;
	__u64 name = 0;
	__u32 value_size;

	if (!file || file->f_inode->i_sb->s_magic != ANON_INODE_FS_MAGIC)
		return -1;
	if (bpf_probe_read_kernel(&name, sizeof(name), file->f_path.dentry->d_name.name) ||
	    name != BPF_MAP_FILE_NAME)
		return -1;
	map = TYPED(struct bpf_map, file->private_data);
	if (state == RW_STATE_BPF_KEY) {
		*len = map->key_size;
		return 0;
	}
	value_size = map->value_size;
	switch ((__u32)map->map_type) {
	case 5:	 /* BPF_MAP_TYPE_PERCPU_HASH */
	case 6:	 /* BPF_MAP_TYPE_PERCPU_ARRAY */
	case 10: /* BPF_MAP_TYPE_LRU_PERCPU_HASH */
	case 21: /* BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE */
		if (!cfg.possible_cpus)
			return -1;
		*len = (((__u64)value_size + 7) & ~7ull) * cfg.possible_cpus;
		return 0;
	case 3:	 /* BPF_MAP_TYPE_PROG_ARRAY */
	case 4:	 /* BPF_MAP_TYPE_PERF_EVENT_ARRAY */
	case 8:	 /* BPF_MAP_TYPE_CGROUP_ARRAY */
	case 12: /* BPF_MAP_TYPE_ARRAY_OF_MAPS */
	case 13: /* BPF_MAP_TYPE_HASH_OF_MAPS */
		*len = 4;
		return 0;
	}
	*len = value_size;
	return 0;
}

static __always_inline int state_size(__u32 state, __u64 key, __u64 *len)
{
	if (state == RW_STATE_BPF_KEY || state == RW_STATE_BPF_VALUE)
		return bpf_map_sizes(state, key, len);
	return -1; /* a semaphore set: its array lives behind the IPC idr */
}

/* Local filesystems whose files change only through writes the kernel sees
 * (so a write open breaks the recorder's lease): not procfs or sysfs, whose
 * regular files are made up at each read, nor network or FUSE filesystems. */
static __always_inline int stable_filesystem(unsigned long magic)
{
	switch (magic) {
	case 0xEF53:	 /* ext2, ext3, ext4 */
	case 0x58465342: /* xfs */
	case 0x9123683E: /* btrfs */
	case 0x01021994: /* tmpfs */
	case 0xF2F52010: /* f2fs */
	case 0x73717368: /* squashfs */
	case 0xE0F5E1E2: /* erofs */
		return 1;
	}
	return 0;
}

/* A read (RW_SYS_READS_FILE) of `ret` bytes from a file the trace holds:
 * fills the identity and offset and says so. A read of a file that could be
 * held is flagged RW_SC_FILE_CANDIDATE for the recorder to count. The bytes
 * the thread read are the copy's as long as nobody could write the file
 * between the copy and the read: the recorder copied it under a read lease,
 * which nobody can open the file for writing (or truncate it) without
 * breaking, and it removes the file from read_copies before it lets the
 * lease go; the writer count and the identity are checked here again. */
static __always_inline int read_by_reference(struct scratch *s, const struct rw_sys_spec *spec,
					     long ret)
{
	struct files_struct *files = bpf_get_current_task_btf()->files;
	int unreadable;
	struct file *file = file_of_fd(s->sc.args[0], &unreadable);
	struct inode *inode;
	struct rw_file_identity *copied;
	struct file_key key;
	__s64 offset;
	__u8 offset_arg = spec->offset_arg;

	if (!file)
		return 0;
	inode = file->f_inode;
	if ((inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return 0;
	if (!stable_filesystem(inode->i_sb->s_magic))
		return 0;
	if (inode->i_writecount.counter > 0)
		return 0;
	fill_file_identity(s, inode);
	key.dev = s->sc.file.dev;
	key.ino = s->sc.file.ino;
	copied = bpf_map_lookup_elem(&read_copies, &key);
	if (!copied || copied->size != s->sc.file.size || copied->mtime_ns != s->sc.file.mtime_ns) {
		s->sc.h.flags |= RW_SC_FILE_CANDIDATE;
		return 0;
	}
	if (offset_arg < RW_MAX_ARGS) {
		offset = (__s64)s->sc.args[offset_arg];
	} else {
		/* Nothing but this thread can move the position during its read:
		 * a descriptor table of its own and the only reference to the
		 * open file (file_ref_t counts from zero: 0 is one reference). */
		if (files->count.counter != 1 || !bpf_core_field_exists(file->f_ref) ||
		    file->f_ref.refcnt.counter != 0)
			return 0;
		offset = file->f_pos - ret;
	}
	if (offset < 0 || offset + ret > s->sc.file.size)
		return 0;
	s->sc.file_offset = offset;
	s->sc.h.flags |= RW_SC_FILE_DATA;
	return 1;
}

/* A write or resize of args[0]'s file while some process has it mapped
 * (its address space has mappings): the identity, and where the data went,
 * so that replay can change its own copy of the mapped file as the kernel
 * changed the pages every mapping of it shows. */
static __always_inline void note_mapped_write(struct scratch *s, const struct rw_sys_spec *spec,
					      long ret)
{
	int unreadable;
	struct file *file = file_of_fd(s->sc.args[0], &unreadable);
	struct address_space *mapping;
	struct inode *inode;
	__u8 offset_arg = spec->offset_arg;

	if (!file)
		return;
	inode = file->f_inode;
	if ((inode->i_mode & S_IFMT_BITS) != S_IFREG_BITS)
		return;
	mapping = inode->i_mapping;
	if (!mapping || !mapping->i_mmap.rb_root.rb_node)
		return;
	fill_file_identity(s, inode);
	/* pwritev2 takes -1 for the file position. */
	if (offset_arg < RW_MAX_ARGS && (__s64)s->sc.args[offset_arg] != -1)
		s->sc.file_offset = (__s64)s->sc.args[offset_arg];
	else if (offset_arg != RW_OFFSET_NONE)
		s->sc.file_offset = file->f_pos - ret;
	else
		s->sc.file_offset = 0;
	s->sc.h.flags |= RW_SC_MAPPED_WRITE;
}

static __always_inline int file_is_known(struct scratch *s)
{
	struct file_key key = {.dev = s->sc.file.dev, .ino = s->sc.file.ino};
	struct rw_file_identity *known = bpf_map_lookup_elem(&known_files, &key);

	return known && known->size == s->sc.file.size && known->mtime_ns == s->sc.file.mtime_ns;
}

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
	return c->walk->status ? 1 : 0;
}

static __always_inline const struct rw_sys_spec *effective_spec(struct scratch *s,
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
	key.nr = s->sc.nr;
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
	pid_tgid = bpf_get_current_pid_tgid();
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
	__u64 pid_tgid = bpf_get_current_pid_tgid();
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

	__u64 pid_tgid = bpf_get_current_pid_tgid();
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
	spec = nr < RW_MAX_SYSCALL_NR ? bpf_map_lookup_elem(&specs, &nr) : 0;
	if (!spec || !(spec->flags & RW_SYS_KNOWN)) {
		s->sc.h.flags |= RW_SC_UNKNOWN;
		goto emit;
	}
	if ((spec->flags & RW_SYS_MAPS_FILE) && ret >= 0 && !(s->sc.args[3] & MAP_ANONYMOUS_FLAG))
		capture_file_identity(s, s->sc.args[4]);
	spec = effective_spec(s, spec);
	if (!spec)
		goto emit;
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
	struct walk_ctx wc = {.walk = &walk, .s = s};
	if (s->spec.nbufs)
		bpf_loop(s->spec.nbufs < RW_MAX_BUFS ? s->spec.nbufs : RW_MAX_BUFS, walk_one_buffer,
			 &wc, 0);
	if (walk.status) {
		/* The supervisor reads what the walk could not (a fault, too
		 * many pieces, a size kept in kernel state). */
		stall(s, walk.status == RW_WALK_FAULT ? RW_STALL_READ_FAULT : RW_STALL_TOO_COMPLEX);
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
	else if (s->sc.nr == MMAP_NR && ret >= 0 && (s->sc.args[3] & MAP_SHARED_FLAG))
		stall(s, RW_STALL_SHARED_MAP);
	else if (turn)
		stall(s, RW_STALL_TURN);
	return 0;
}
