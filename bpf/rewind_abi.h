/* rewind — the contract between the in-kernel capture program and userspace.
 *
 * Plain C, fixed-width types only: this header is compiled by clang for the
 * BPF target and by the C++ compiler for the recorder, the replayer and the
 * unit tests. Every struct that crosses the ring buffer or a map lives here,
 * with its size pinned by a static assertion at the bottom.
 */
#ifndef REWIND_ABI_H
#define REWIND_ABI_H

#ifdef __bpf__
/* vmlinux.h already provides __u8 … __u64. */
#else
#include <linux/types.h>
#endif

#define RW_MAX_ARGS 6
#define RW_MAX_BUFS 6
/* Largest piece of user memory copied in one ring record. */
#define RW_CHUNK_BYTES 16384
/* Upper bound on memory segments the kernel side walks for one buffer
 * (iovec entries, recvmmsg messages…). Beyond it the thread is stalled and
 * the supervisor copies the whole event from userspace, without a limit. */
#define RW_BPF_MAX_SEGMENTS 64
/* Entries of the syscall spec array: x86-64 numbers are below 512. */
#define RW_MAX_SYSCALL_NR 512
/* Longest string (path) captured as an input buffer. */
#define RW_MAX_STRING 4096
/* The unit of syscall exit times, a thread's running time (250 us: 4,000
 * a second). Fine enough to tell apart, in a run of a few milliseconds,
 * the stretch between two syscalls that holds most of the time; coarse
 * enough that the fast calls of a syscall-heavy loop share one value,
 * which the trace's compression stores for little (a million 64-byte
 * preads, cycling through a 4 KiB file: 2.5 bytes a call against 2.2 with
 * 4 ms jiffies of wall-clock time, 3.2 with 64 us units of it; getppid:
 * 1.4 in all). */
#define RW_EXIT_TIME_UNIT_NS 250000

/* ---- syscall table, as the kernel side sees it ------------------------ */

/* How a buffer's length is found. */
enum rw_size_kind {
	RW_SZ_NONE = 0,
	RW_SZ_FIXED,	   /* size bytes */
	RW_SZ_RET,	   /* return value bytes (× size if size != 0), when ret > 0 */
	RW_SZ_ARG,	   /* args[size_arg] bytes (× size if size != 0) */
	RW_SZ_SOCKLEN,	   /* min(*(u32 *)args[size_arg] at entry, same at exit) */
	RW_SZ_U32_AT_EXIT, /* *(u32 *)args[size_arg] after the call, capped by size */
	RW_SZ_FDSET,	   /* an fd_set for args[size_arg] descriptors */
	RW_SZ_IOVEC,	   /* iovec array at ptr, count args[size_arg]; output
			      limited to ret bytes, input to the iovec lengths */
	RW_SZ_MSGHDR,	   /* struct msghdr at ptr: header, name, iov data, control */
	RW_SZ_MMSGHDR,	   /* struct mmsghdr[ret] at ptr (recvmmsg/sendmmsg) */
	RW_SZ_CSTRING,	   /* NUL-terminated string, at most size bytes */
	RW_SZ_IOCTL,	   /* size encoded in the ioctl command (_IOC_SIZE) */
	/* A u32 of a struct in user memory, as it is after the call (ifconf's
	 * ifc_len, bpf_attr's log_size, fiemap's fm_mapped_extents): the u32
	 * at args[size_arg] + size_off (× size if size != 0). */
	RW_SZ_FIELD,
	RW_SZ_RET_CAPPED,  /* return value bytes, at most args[size_arg] (calls that
			      return the whole length and copy what fits) */
	RW_SZ_RET_IF_FITS, /* return value bytes if at most args[size_arg], else
			      none (calls that copy only what fits whole) */
	RW_SZ_PAGES,	   /* a byte per page of args[size_arg] bytes (mincore) */
	/* Sized by kernel state the call names but does not carry: `size` is
	 * an enum rw_state, its key args[size_arg] or, with
	 * RW_BUF_KEY_IN_FIELD, the u32 at args[size_arg] + size_off. */
	RW_SZ_STATE,
	RW_SZ_MMSG_LEN,	 /* the msg_len of each of ret struct mmsghdr (sendmmsg) */
	RW_SZ_IO_EVENTS, /* struct io_event[ret], and the data of the reads they
			    complete (io_getevents) */
	RW_SZ_KIND_COUNT
};

/* Kernel state an output's size depends on (RW_SZ_STATE). */
enum rw_state {
	RW_STATE_BPF_KEY = 1,	/* the key size of the BPF map at descriptor `key` */
	RW_STATE_BPF_VALUE = 2, /* the size of a value the kernel copies out of it */
	RW_STATE_SEM_NSEMS = 3, /* 2 bytes per semaphore of the set with id `key` */
};

/* Buffer flags. */
#define RW_BUF_OUT	  0x01 /* written by the kernel: replay restores it */
#define RW_BUF_IN	  0x02 /* read by the kernel: replay checks it */
#define RW_BUF_ON_SUCCESS 0x04 /* only when ret >= 0 */
#define RW_BUF_ON_ERROR	  0x08 /* only when ret < 0 */
/* RW_SZ_STATE: the state's key is the u32 at args[size_arg] + size_off. */
#define RW_BUF_KEY_IN_FIELD 0x10
/* An input kept whole in the trace, whatever its size (what replay reads
 * in it: a BPF program's instructions), not only as a hash. */
#define RW_BUF_KEEP	  0x20
#define RW_BUF_NO_PTR_ARG 0xff /* value of ptr_arg: no buffer */
#define RW_NO_ARG	  0xff /* value of within_arg: no bound */

/* Where a buffer is (rw_buf_spec.ptr_how): at args[ptr_arg]; at
 * args[ptr_arg] + ptr_off (a struct's inline array); at the u64 at
 * args[ptr_arg] + ptr_off (a struct's pointer field: bpf_attr, ifconf). */
#define RW_PTR_ARG    0
#define RW_PTR_AT     1
#define RW_PTR_LOADED 2

/* When a buffer is there (rw_buf_spec.when_how), if when_bits != 0. */
#define RW_WHEN_ANY_BIT	     0 /* args[when_arg] has one of when_bits */
#define RW_WHEN_EQUALS	     1 /* args[when_arg] == when_bits */
#define RW_WHEN_FIELD_EQUALS 2 /* the u32 at args[when_arg] + when_off == when_bits */

struct rw_buf_spec {
	__u8 kind;     /* enum rw_size_kind */
	__u8 ptr_arg;  /* argument holding the user pointer (or the struct holding it) */
	__u8 size_arg; /* argument used by the size rule */
	__u8 flags;    /* RW_BUF_* */
	__u32 size;    /* fixed size, multiplier or cap, per kind */
	/* If non-zero, the buffer is there only when args[when_arg] has one
	 * of these bits (clone writes the parent's tid only when its flags
	 * ask for it), or as when_how says. */
	__u32 when_bits;
	__u8 when_arg;
	__u8 when_how; /* RW_WHEN_* */
	__u8 ptr_how;  /* RW_PTR_* */
	/* The fields read out of a struct (ptr_off, size_off, when_off) count
	 * only if they lie within args[within_arg] bytes, the size the program
	 * gave the kernel (bpf_attr: the kernel reads a shorter struct as if
	 * the rest were zero). RW_NO_ARG: no bound. */
	__u8 within_arg;
	__u16 ptr_off;	/* RW_PTR_AT, RW_PTR_LOADED */
	__u16 size_off; /* RW_SZ_FIELD, RW_SZ_STATE with RW_BUF_KEY_IN_FIELD */
	__u16 when_off; /* RW_WHEN_FIELD_EQUALS */
	__u16 reserved;
	__u32 cap; /* if non-zero, at most this many bytes */
};

/* Syscall flags (kernel side). */
#define RW_SYS_KNOWN 0x01 /* in the table: effects are described */
#define RW_SYS_DISPATCH                                                                            \
	0x02		      /* buffers depend on args[dispatch_arg]:                             \
				 look up rw_subcmd_key in the subcommand map */
#define RW_SYS_MAPS_FILE 0x04 /* mmap: capture the identity of args[4] */
/* While the threads of a process run one at a time, a thread gives the CPU
 * up at the entry of a call that may block (it may wait for another thread
 * of its process). Calls with neither flag never block: the thread runs
 * through them without a stop. */
#define RW_SYS_MAY_BLOCK    0x08
#define RW_SYS_BLOCKS_ON_FD 0x10 /* only if args[0] is a descriptor that can block */
/* Reads args[0]'s file into the buffer bufs[0] names, at args[offset_arg]
 * (RW_OFFSET_FILE_POS: at the file position): where the trace holds a copy
 * of that file, the kernel side records where the bytes came from instead
 * of the bytes (see read_by_reference in capture.bpf.c). */
#define RW_SYS_READS_FILE  0x20
#define RW_OFFSET_FILE_POS 0xff
/* Writes (or resizes) args[0]'s file, at args[offset_arg]
 * (RW_OFFSET_FILE_POS: the file position; RW_OFFSET_NONE: no data, a new
 * size): if some process has that file mapped, the kernel side records the
 * identity and the offset (RW_SC_MAPPED_WRITE), for replay to change the
 * mapped file as the kernel did. */
#define RW_SYS_WRITES_FILE 0x40
#define RW_OFFSET_NONE	   0xfe
/* Returns a new descriptor for a file (open, openat, creat…): in any
 * process of the machine, an open for writing of a file whose copy reads
 * refer to ends those references (see note_open in capture_files.bpf.h). */
#define RW_SYS_OPENS_FILE 0x80

/* Values of the kernel side's `serialized` map: the process's threads run
 * one at a time, handing the CPU over at calls that may block, or also at
 * every read or write whatever its descriptor (rewind record --chaos). */
#define RW_SERIALIZED		 1
#define RW_SERIALIZED_EVERY_CALL 2

/* Calls whose answer would show that the process is recorded (the rdtsc
 * trap, the recording's seccomp filter): on success the kernel side hands
 * them to the supervisor (RW_STALL_VIEW), which gives the program the
 * answer it would get without rewind, and that is what the trace holds. */
enum rw_view {
	RW_VIEW_NONE = 0,
	RW_VIEW_TSC_MODE = 1,	  /* prctl(PR_GET_TSC, int *): PR_TSC_ENABLE */
	RW_VIEW_SECCOMP_MODE = 2, /* prctl(PR_GET_SECCOMP): the mode without rewind's filter */
	RW_VIEW_ANSWERED = 3,	  /* ptrace, wait4, waitid: when the supervisor asked
				     (answered_calls), whatever the call returned */
	RW_VIEW_WRITES_PROCESS = 4, /* process_vm_writev: into a process other than
				       the caller's (args[0]), the supervisor
				       records it (RW_STALL_PROCESS_MEMORY) */
	RW_VIEW_SIGNAL_MASK = 5,    /* rt_sigprocmask, rt_sigreturn: the thread's
				       blocked signals after it go into the
				       signal_masks map (the supervisor's rdtsc
				       emulation puts back what the kernel's
				       forced SIGSEGV unblocked) */
	RW_VIEW_SHARES_MEMORY = 6,  /* mmap MAP_SHARED, shmat: on success the
				       thread stops after it (RW_STALL_SHARED_MAP)
				       for the supervisor to see who shares
				       memory (rw_shares_memory) */
	RW_VIEW_RSEQ = 7,	    /* rseq: a registration that succeeded (a process
				       rewind attached to has no recording filter)
				       is undone, and the program told ENOSYS, as
				       the filter tells a program rewind started */
};

struct rw_sys_spec {
	__u8 flags;
	__u8 nbufs;
	__u8 dispatch_arg;
	__u8 dispatch_mask_bits; /* if non-zero, key uses arg & ((1<<bits)-1) */
	__u8 offset_arg;	 /* RW_SYS_READS_FILE: where the offset is */
	__u8 view;		 /* enum rw_view: its result shows the recorder */
	__u8 reserved[2];
	struct rw_buf_spec bufs[RW_MAX_BUFS];
};

/* Whether a call that returned `ret` made memory its process shares with
 * others: a System V attach, or a MAP_SHARED mapping (`map_flags`, mmap's
 * fourth argument). */
static inline int rw_shares_memory(const struct rw_sys_spec *spec, __s64 ret, __u64 map_flags)
{
	return spec->view == RW_VIEW_SHARES_MEMORY && ret >= 0 &&
	       (!(spec->flags & RW_SYS_MAPS_FILE) || (map_flags & 0x01 /* MAP_SHARED */));
}

/* ioctl request numbers that encode their argument's size and direction. */
#define RW_IOC_DIR(cmd)	 (((cmd) >> 30) & 3u)
#define RW_IOC_SIZE(cmd) (((cmd) >> 16) & 0x3fffu)
#define RW_IOC_WRITE	 1u /* userspace writes, the kernel reads */
#define RW_IOC_READ	 2u /* the kernel writes */

struct rw_subcmd_key {
	__u32 nr;
	__u32 reserved;
	__u64 value;
};

/* ---- per-thread state kept by the kernel side ------------------------- */

enum rw_task_phase {
	RW_TASK_UNTRACKED = 0,
	RW_TASK_WAIT_EXEC = 1, /* the launcher: recording starts at its execve */
	RW_TASK_ACTIVE = 2,
};

/* Nesting of synchronization calls a thread is in (rewind record --parallel):
 * pthread_once runs its initializer, which may lock. */
#define RW_SYNC_MAX_DEPTH 4

struct rw_sync_frame {
	__u64 object; /* first argument: the lock, semaphore, barrier… */
	__u64 entry;  /* the function's address in the process */
	__u32 fn;     /* enum rw_sync_fn */
	__u32 reserved;
};

struct rw_task_state {
	__u32 phase;
	__u32 child_return; /* forked: the next exit is the child's return */
	__u32 released;	    /* gave the CPU up at this syscall's entry (RW_REC_YIELD) */
	__u16 sync_depth;   /* synchronization calls entered and not returned */
	__u16 in_uretprobe; /* in the kernel's uretprobe syscall: not the program's */
	__u64 last_exit_ns; /* when its last syscall returned (0: in one, or none yet) */
	__u64 user_ns;	    /* its running time between syscalls so far */
	__s32 entry_nr;	    /* the number its current syscall entered with */
	__u32 pad;
	struct rw_sync_frame sync[RW_SYNC_MAX_DEPTH];
};

#define RW_NR_RT_SIGRETURN 15
#define RW_NR_RESTART_SYSCALL 219
#define RW_ERESTART_RESTARTBLOCK (-516)
#define RW_NR_EXECVE 59
#define RW_NR_EXECVEAT 322
/* The kernel's uretprobe trampoline returns through this syscall of its own
 * (x86-64, Linux 6.11 and later): not the program's, never in a trace. */
#define RW_NR_URETPROBE 335

/* ---- ring buffer records ---------------------------------------------- */

enum rw_record_kind {
	RW_REC_SYSCALL = 1, /* closes one syscall; its data records precede it */
	RW_REC_DATA = 2,    /* a piece of user memory belonging to the next
			       RW_REC_SYSCALL of the same thread */
	RW_REC_FORK = 3,
	RW_REC_EXIT = 4,
	RW_REC_YIELD = 5, /* a thread of a serialized process entered a syscall
			     that may block: it gives the CPU up, and the
			     syscall's event takes this record's seq */
	RW_REC_SYNC = 6,  /* a thread of a process recorded with --parallel
			     passed a synchronization point (uprobes on libc) */
};

struct rw_rec_header {
	__u16 kind;
	__u16 flags;
	__u32 tid;
	__u64 seq;
};

/* RW_REC_SYSCALL flags */
#define RW_SC_UNKNOWN	     0x0001 /* syscall not in the table */
#define RW_SC_UNKNOWN_SUBCMD 0x0002 /* ioctl/prctl/… command not in the table */
#define RW_SC_FILE	     0x0008 /* file identity fields are valid */
#define RW_SC_CHILD_RETURN   0x0010 /* a new task's first return from fork/clone */
#define RW_SC_IN_SYNC	     0x0020 /* made inside a probed synchronization call */
/* A read of a file the trace holds a copy of (file identity valid): the
 * bytes read are that copy's at file_offset, and no data records precede. */
#define RW_SC_FILE_DATA 0x0040
/* A read of a file the trace could hold a copy of (identity valid; no
 * process had it open for writing): its bytes follow as usual. */
#define RW_SC_FILE_CANDIDATE 0x0080
/* A write or resize (RW_SYS_WRITES_FILE) of a regular file that some
 * process had mapped when the call returned: identity (its size after the
 * call) and file_offset (where the data went) valid. */
#define RW_SC_MAPPED_WRITE 0x0100

struct rw_file_identity {
	__u64 dev;
	__u64 ino;
	__s64 size;
	__s64 mtime_ns;
	/* Nobody can set it: any write, and putting the mtime back, change it. */
	__s64 ctime_ns;
};

/* A value of the kernel side's read_copies map (key: device and inode).
 * The recorder inserts RW_COPY_PENDING, opens the file, and the kernel
 * side, at that open's return, counts the file's writers (RW_COPY_CHECKED);
 * once the recorder has hashed the content unchanged it makes the entry
 * RW_COPY_SHARED. Any open for writing, by any process, deletes it. */
enum rw_read_copy_state {
	RW_COPY_PENDING = 1,
	RW_COPY_CHECKED = 2,
	RW_COPY_SHARED = 3,
};

struct rw_read_copy {
	struct rw_file_identity id;
	__u32 state;	  /* enum rw_read_copy_state */
	__s32 writers;	  /* RW_COPY_CHECKED: i_writecount at the recorder's open */
	__u32 fine_ctime; /* RW_COPY_CHECKED: every change gets a ctime unlike any read before */
	__u32 reserved;
};

struct rw_rec_syscall {
	struct rw_rec_header h;
	__u32 tgid;
	__s32 nr;
	__u64 args[RW_MAX_ARGS];
	__s64 ret;
	__u64 ip;
	__u64 sp;
	__u64 exit_time; /* the thread's running time so far, in RW_EXIT_TIME_UNIT_NS, plus 1 */
	struct rw_file_identity file;
	__s64 file_offset; /* RW_SC_FILE_DATA */
};

struct rw_rec_data {
	struct rw_rec_header h;
	__u64 addr;
	__u32 len;
	__u8 buf_index;
	__u8 dir_flags; /* RW_BUF_IN or RW_BUF_OUT */
	__u16 reserved;
	/* followed by len bytes */
};

struct rw_rec_fork {
	struct rw_rec_header h; /* tid = parent thread */
	__u32 parent_tgid;
	__u32 child_tid;
	__u32 child_tgid;
	__u32 reserved;
	__u64 ktime_ns;
};

struct rw_rec_exit {
	struct rw_rec_header h;
	__u32 tgid;
	__s32 exit_code;       /* task->exit_code: wait status form */
	__s32 group_exit_code; /* signal->group_exit_code */
	__u32 group_dead;
	__u64 ktime_ns;
	__s32 pending_nr; /* syscall in progress at exit (exit_group…), or -1 */
	__u32 reserved;
	__u64 pending_args[RW_MAX_ARGS];
};

struct rw_rec_yield {
	struct rw_rec_header h; /* seq = the place of the syscall's event */
	__u32 tgid;
	__s32 nr;
};

/* The libc synchronization functions rewind record --parallel orders. The
 * numbering is part of the trace format: append only. */
enum rw_sync_fn {
	RW_SYNC_MUTEX_LOCK = 1,
	RW_SYNC_MUTEX_TRYLOCK,
	RW_SYNC_MUTEX_TIMEDLOCK,
	RW_SYNC_MUTEX_UNLOCK,
	RW_SYNC_RWLOCK_RDLOCK,
	RW_SYNC_RWLOCK_WRLOCK,
	RW_SYNC_RWLOCK_TRYRDLOCK,
	RW_SYNC_RWLOCK_TRYWRLOCK,
	RW_SYNC_RWLOCK_UNLOCK,
	RW_SYNC_COND_WAIT,
	RW_SYNC_COND_TIMEDWAIT,
	RW_SYNC_COND_SIGNAL,
	RW_SYNC_COND_BROADCAST,
	RW_SYNC_SEM_WAIT,
	RW_SYNC_SEM_TRYWAIT,
	RW_SYNC_SEM_TIMEDWAIT,
	RW_SYNC_SEM_POST,
	RW_SYNC_BARRIER_WAIT,
	RW_SYNC_SPIN_LOCK,
	RW_SYNC_SPIN_TRYLOCK,
	RW_SYNC_SPIN_UNLOCK,
	RW_SYNC_ONCE,
	RW_SYNC_CREATE,
	RW_SYNC_JOIN,
	RW_SYNC_FN_COUNT
};

/* Where a synchronization event's seq is taken: at the entry of a call that
 * releases (others may go on after it), at the return of one that acquires
 * (it went on after others released). A condition wait or a barrier is both. */
#define RW_SYNC_RELEASE 0x0001 /* rw_rec_header.flags of RW_REC_SYNC */
#define RW_SYNC_ACQUIRE 0x0002

struct rw_rec_sync {
	struct rw_rec_header h;
	__u32 tgid;
	__u32 fn;     /* enum rw_sync_fn */
	__u64 object; /* first argument */
	__u64 entry;  /* the function's address */
	__s64 ret;    /* return value (acquire), else 0 */
};

/* ---- stalls: when the kernel side cannot finish an event --------------- */

/* The kernel side never drops an event silently. When it cannot emit one
 * completely (ring full, a user page not present, too many segments) it
 * emits nothing for that syscall, stores the syscall here and stops the
 * thread with SIGSTOP before it returns to user mode. The supervisor drains
 * the ring, rebuilds the event from the thread's still-intact memory with the
 * same table, and resumes the thread. Assists work the same way for events
 * that were emitted but need the supervisor (a file to copy). */
enum rw_stall_reason {
	RW_STALL_RING_FULL = 1,
	RW_STALL_READ_FAULT = 2,
	RW_STALL_TOO_COMPLEX = 3,
	RW_STALL_COPY_FILE = 4,	 /* event emitted; copy the mapped file */
	RW_STALL_TURN = 5,	 /* event emitted; the thread gave the CPU up at
				    the entry (RW_REC_YIELD): it waits for its
				    turn before it runs user code again */
	RW_STALL_SHARED_MAP = 6, /* event emitted; a MAP_SHARED mapping: the
				    supervisor sees who shares memory */
	RW_STALL_VIEW = 7,	 /* not emitted: the supervisor gives the
				    program its own view (enum rw_view) */
	RW_STALL_PROCESS_MEMORY = 8, /* not emitted: a write through another
					process's /proc/PID/mem, or with
					process_vm_writev, which the supervisor
					names */
};

struct rw_stall {
	__u32 reason;
	__u32 tgid;
	__u64 seq;
	struct rw_rec_syscall sc; /* the syscall (its h.flags as computed) */
};

/* ---- knobs set by userspace before load -------------------------------- */

struct rw_config {
	__u32 recorder_tgid; /* never record the recorder itself */
	__u32 wakeup_bytes;  /* wake the consumer once this much is pending */
	__u32 possible_cpus; /* a per-CPU map's value holds one slot per possible CPU */
	__u32 reserved;
	/* The recorder's pid namespace (the inode of /proc/self/ns/pid), 0 for
	 * the initial one: in another (a container), every thread and process
	 * id the capture reports or keys a map with is as the recorder sees it. */
	__u64 pid_ns_ino;
};

#define RW_STALL_SIGNAL 19 /* SIGSTOP */

/* ---- replay's breakpoint filters (write_match.bpf.c) ------------------- */

/* Where a candidate instruction writes: [base + index * scale + disp,
 * + size), times rcx for a repeated string store; registers by their index
 * in user_regs_struct, -1 for none. */
struct rw_write_form {
	__u64 ip;
	__s64 disp;
	__s32 base;
	__s32 index;
	__u32 scale;
	__u32 times_rcx;
	__u64 size;
};
#define RW_WRITE_FORMS 4

/* ---- replay's breakpoint filters (position_match.bpf.c) ---------------- */

/* A point in user code (a signal delivered there) is an execution of its
 * instruction with its registers where a few pages hold what they held.
 * The recorder keeps, beside their digest, a sum of those pages that the
 * breakpoint's filter can compute in the kernel: page by page, the page's
 * address then its 512 words, each through rw_page_sum_step. For at most
 * RW_SUM_PAGES pages; 0 means no sum. */
#define RW_SUM_PAGES 8
#define RW_PAGE_WORDS 512
static inline __u64 rw_page_sum_step(__u64 h, __u64 word)
{
	h ^= word;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

#ifndef __bpf__
#ifdef __cplusplus
static_assert(sizeof(struct rw_buf_spec) == 28, "rw_buf_spec layout");
static_assert(sizeof(struct rw_sys_spec) == 8 + 28 * RW_MAX_BUFS, "rw_sys_spec layout");
static_assert(sizeof(struct rw_rec_header) == 16, "rw_rec_header layout");
static_assert(sizeof(struct rw_rec_syscall) == 152, "rw_rec_syscall layout");
static_assert(sizeof(struct rw_read_copy) == 56, "rw_read_copy layout");
static_assert(sizeof(struct rw_rec_data) == 32, "rw_rec_data layout");
static_assert(sizeof(struct rw_rec_fork) == 40, "rw_rec_fork layout");
static_assert(sizeof(struct rw_rec_exit) == 96, "rw_rec_exit layout");
static_assert(sizeof(struct rw_rec_yield) == 24, "rw_rec_yield layout");
static_assert(sizeof(struct rw_rec_sync) == 48, "rw_rec_sync layout");
static_assert(sizeof(struct rw_task_state) == 40 + 24 * RW_SYNC_MAX_DEPTH, "rw_task_state layout");
static_assert(sizeof(struct rw_write_form) == 40, "rw_write_form layout");
#endif
#endif

#endif /* REWIND_ABI_H */
