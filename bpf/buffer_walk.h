/* rewind — from a syscall's buffer description to the user memory it names.
 *
 * One walker, two compilers: the BPF capture program includes this file to
 * copy buffers at sys_exit, and the supervisor includes it to rebuild an
 * event from a stopped thread's memory when the kernel side stalled. Both
 * therefore agree byte for byte on what a syscall wrote.
 *
 * The includer defines, before including:
 *   RW_READ_USER(walk, dst, size, user_addr)  -> 0 on success
 *   RW_STATE_SIZE(walk, state, key, len_ptr)   -> 0 and *len_ptr set when it
 *                                              knows the size kernel state
 *                                              gives an output (enum rw_state)
 *   RW_WALK_MAX_SEGMENTS                       a power of two
 *   RW_WALK_MAX_IOV                            iovec entries walked per array;
 *                                              longer arrays are TOO_COMPLEX
 *
 * Captured bytes are the memory contents at syscall exit. Taking a little
 * more than the kernel wrote (a sockaddr rounded up to its cap) is harmless:
 * replay restores bytes the memory already held at that moment.
 */
#ifndef REWIND_BUFFER_WALK_H
#define REWIND_BUFFER_WALK_H

#include "rewind_abi.h"

#ifdef __bpf__
#define RW_INLINE static __always_inline
#else
#define RW_INLINE static inline
#endif

#if !defined(RW_WALK_MAX_SEGMENTS) || !defined(RW_WALK_MAX_IOV) || !defined(RW_STATE_SIZE)
#error "define RW_WALK_MAX_SEGMENTS, RW_WALK_MAX_IOV and RW_STATE_SIZE before including buffer_walk.h"
#endif

#define RW_SEG_STRING 0x01 /* length is a maximum: copy up to the NUL */

struct rw_segment {
	__u64 addr;
	__u64 len;
	__u8 buf_index;
	__u8 dir; /* RW_BUF_IN or RW_BUF_OUT */
	__u8 seg_flags;
	__u8 reserved[5];
};

enum rw_walk_status {
	RW_WALK_OK = 0,
	RW_WALK_TOO_COMPLEX = 1, /* more segments than RW_WALK_MAX_SEGMENTS */
	RW_WALK_FAULT = 2,	 /* a descriptor (iovec, msghdr) was unreadable */
	RW_WALK_UNSIZED = 3,	 /* an output's size depends on state the walker
				    could not read (RW_SZ_STATE) */
};

struct rw_walk {
	const __u64 *args;
	__s64 ret;
	void *reader; /* the includer's context (RW_READ_USER's reader; BPF: the count) */
	struct rw_segment *segs;
	__u32 nsegs;
	__u32 status;
};

/* Kernel layouts on x86-64. */
struct rw_iovec {
	__u64 base;
	__u64 len;
};

struct rw_msghdr {
	__u64 name;
	__u32 namelen;
	__u32 pad0;
	__u64 iov;
	__u64 iovlen;
	__u64 control;
	__u64 controllen;
	__u32 flags;
	__u32 pad1;
};

#define RW_MSGHDR_SIZE	      56
#define RW_MMSGHDR_SIZE	      64
#define RW_SOCKADDR_CAP	      128
#define RW_MSG_NAMELEN_OFF    8
#define RW_MSG_CONTROLLEN_OFF 40
#define RW_MSG_FLAGS_OFF      48
#define RW_MMSG_LEN_OFF	      56
#define RW_UIO_MAXIOV	      1024

/* struct io_event and struct iocb (linux/aio_abi.h). */
#define RW_IO_EVENT_SIZE    32
#define RW_IO_EVENT_OBJ_OFF 8
#define RW_IO_EVENT_RES_OFF 16
#define RW_IOCB_OPCODE_OFF  16
#define RW_IOCB_BUF_OFF	    24
#define RW_IOCB_NBYTES_OFF  32
#define RW_IOCB_CMD_PREAD   0
#define RW_IOCB_CMD_PREADV  7

/* Where the walk counts its segments. The BPF includer keeps the count in
 * map memory, whose contents the verifier does not track: counted on the
 * stack, each round of a bpf_loop saw another count, and the verifier
 * explored every one (sys_exit's program took 70,000 instructions and a
 * fifth of a second to load, most of a short recording's start-up). */
#ifndef RW_WALK_COUNT
#define RW_WALK_COUNT(w) ((w)->nsegs)
#endif
/* And its status, for the same reason: each value it took in a round was
 * another state to the verifier. */
#ifndef RW_WALK_STATUS
#define RW_WALK_STATUS(w) ((w)->status)
#endif

RW_INLINE void rw_push(struct rw_walk *w, __u64 addr, __u64 len, __u8 buf_index, __u8 dir,
		       __u8 seg_flags)
{
	__u32 i = RW_WALK_COUNT(w);

	if (!addr || !len)
		return;
	if (i >= RW_WALK_MAX_SEGMENTS) {
		RW_WALK_STATUS(w) = RW_WALK_TOO_COMPLEX;
		return;
	}
	i &= RW_WALK_MAX_SEGMENTS - 1;
	w->segs[i].addr = addr;
	w->segs[i].len = len;
	w->segs[i].buf_index = buf_index;
	w->segs[i].dir = dir;
	w->segs[i].seg_flags = seg_flags;
	RW_WALK_COUNT(w) = i + 1;
}

RW_INLINE __u64 rw_min(__u64 a, __u64 b)
{
	return a < b ? a : b;
}

/* An iovec array: at most `limit` bytes. */
#ifdef __bpf__
/* The kernel side walks iovecs with bpf_loop: the verifier then checks one
 * iteration instead of every unrolled one. */
struct rw_iov_ctx {
	struct rw_walk *w;
	__u64 iov_addr;
	__u64 count;
	__u64 limit;
	__u8 buf_index;
	__u8 dir;
};

static long rw_iov_step(__u32 i, void *data)
{
	struct rw_iov_ctx *c = data;
	struct rw_iovec iov;
	__u64 take;

	if (i >= c->count || c->limit == 0)
		return 1;
	if (RW_READ_USER(c->w, &iov, sizeof(iov), c->iov_addr + (__u64)i * sizeof(iov))) {
		RW_WALK_STATUS(c->w) = RW_WALK_FAULT;
		return 1;
	}
	take = rw_min(iov.len, c->limit);
	rw_push(c->w, iov.base, take, c->buf_index, c->dir, 0);
	if (RW_WALK_STATUS(c->w))
		return 1;
	c->limit -= take;
	return 0;
}
#endif

RW_INLINE void rw_walk_iovec(struct rw_walk *w, __u64 iov_addr, __u64 count, __u64 limit,
			     __u8 buf_index, __u8 dir)
{
	if (count > RW_UIO_MAXIOV)
		count = RW_UIO_MAXIOV;
	if (count > RW_WALK_MAX_IOV) {
		RW_WALK_STATUS(w) = RW_WALK_TOO_COMPLEX;
		return;
	}
#ifdef __bpf__
	struct rw_iov_ctx c = {.w = w,
			       .iov_addr = iov_addr,
			       .count = count,
			       .limit = limit,
			       .buf_index = buf_index,
			       .dir = dir};
	if (count)
		bpf_loop((__u32)count, rw_iov_step, &c, 0);
#else
	struct rw_iovec iov;
	__u64 i;

	for (i = 0; i < count && limit > 0; i++) {
		if (RW_READ_USER(w, &iov, sizeof(iov), iov_addr + i * sizeof(iov))) {
			RW_WALK_STATUS(w) = RW_WALK_FAULT;
			return;
		}
		__u64 take = rw_min(iov.len, limit);
		rw_push(w, iov.base, take, buf_index, dir, 0);
		if (RW_WALK_STATUS(w))
			return;
		limit -= take;
	}
#endif
}

/* One msghdr. `data_limit` bounds the iov bytes (ret, or msg_len). */
RW_INLINE void rw_walk_msghdr(struct rw_walk *w, __u64 addr, __u64 data_limit, __u8 buf_index,
			      __u8 dir)
{
	struct rw_msghdr m;

	if (RW_READ_USER(w, &m, sizeof(m), addr)) {
		RW_WALK_STATUS(w) = RW_WALK_FAULT;
		return;
	}
	if (dir == RW_BUF_OUT) {
		/* The kernel writes back these three fields. */
		rw_push(w, addr + RW_MSG_NAMELEN_OFF, 4, buf_index, dir, 0);
		rw_push(w, addr + RW_MSG_CONTROLLEN_OFF, 8, buf_index, dir, 0);
		rw_push(w, addr + RW_MSG_FLAGS_OFF, 4, buf_index, dir, 0);
	}
	rw_push(w, m.name, rw_min(m.namelen, RW_SOCKADDR_CAP), buf_index, dir, 0);
	if (RW_WALK_STATUS(w))
		return;
	rw_walk_iovec(w, m.iov, m.iovlen, data_limit, buf_index, dir);
	if (RW_WALK_STATUS(w))
		return;
	rw_push(w, m.control, m.controllen, buf_index, dir, 0);
}

/* recvmmsg/sendmmsg: `count` messages, each bounded by its msg_len. Too
 * irregular for the kernel side: BPF builds stall on it (TOO_COMPLEX when
 * RW_WALK_MAX_SEGMENTS is small), the supervisor walks it. */
RW_INLINE void rw_walk_mmsghdr(struct rw_walk *w, __u64 addr, __u64 count, __u8 buf_index, __u8 dir)
{
#ifdef __bpf__
	if (count)
		RW_WALK_STATUS(w) = RW_WALK_TOO_COMPLEX;
#else
	__u64 i;

	for (i = 0; i < count && i < RW_UIO_MAXIOV && !RW_WALK_STATUS(w); i++) {
		__u64 msg = addr + i * RW_MMSGHDR_SIZE;
		__u32 msg_len;

		if (RW_READ_USER(w, &msg_len, sizeof(msg_len), msg + RW_MMSG_LEN_OFF)) {
			RW_WALK_STATUS(w) = RW_WALK_FAULT;
			return;
		}
		if (dir == RW_BUF_OUT)
			rw_push(w, msg + RW_MMSG_LEN_OFF, 4, buf_index, dir, 0);
		rw_walk_msghdr(w, msg, msg_len, buf_index, dir);
	}
#endif
}

/* sendmmsg: the kernel writes back the msg_len of each message it sent.
 * Like the messages themselves, too irregular for the kernel side. */
RW_INLINE void rw_walk_mmsg_len(struct rw_walk *w, __u64 addr, __u64 count, __u8 buf_index,
				__u8 dir)
{
#ifdef __bpf__
	if (count)
		RW_WALK_STATUS(w) = RW_WALK_TOO_COMPLEX;
#else
	__u64 i;

	for (i = 0; i < count && i < RW_UIO_MAXIOV && !RW_WALK_STATUS(w); i++)
		rw_push(w, addr + i * RW_MMSGHDR_SIZE + RW_MMSG_LEN_OFF, 4, buf_index, dir, 0);
#endif
}

/* io_getevents: `count` struct io_event, then what each completed read
 * put in its buffers (the kernel writes them when the I/O completes, which
 * may be at any moment before: a program may look at them once the event
 * says so). The kernel side leaves this to the supervisor. */
RW_INLINE void rw_walk_io_events(struct rw_walk *w, __u64 addr, __u64 count, __u8 buf_index,
				 __u8 dir)
{
#ifdef __bpf__
	if (count)
		RW_WALK_STATUS(w) = RW_WALK_TOO_COMPLEX;
#else
	__u64 i;

	rw_push(w, addr, count * RW_IO_EVENT_SIZE, buf_index, dir, 0);
	for (i = 0; i < count && i < RW_UIO_MAXIOV && !RW_WALK_STATUS(w); i++) {
		__u64 ev = addr + i * RW_IO_EVENT_SIZE, iocb, buf, nbytes;
		__s64 res;
		__u16 opcode;

		if (RW_READ_USER(w, &iocb, 8, ev + RW_IO_EVENT_OBJ_OFF) ||
		    RW_READ_USER(w, &res, 8, ev + RW_IO_EVENT_RES_OFF)) {
			RW_WALK_STATUS(w) = RW_WALK_FAULT;
			return;
		}
		if (res <= 0)
			continue;
		if (RW_READ_USER(w, &opcode, 2, iocb + RW_IOCB_OPCODE_OFF) ||
		    RW_READ_USER(w, &buf, 8, iocb + RW_IOCB_BUF_OFF) ||
		    RW_READ_USER(w, &nbytes, 8, iocb + RW_IOCB_NBYTES_OFF)) {
			RW_WALK_STATUS(w) = RW_WALK_FAULT;
			return;
		}
		if (opcode == RW_IOCB_CMD_PREAD)
			rw_push(w, buf, rw_min(nbytes, (__u64)res), buf_index, dir, 0);
		else if (opcode == RW_IOCB_CMD_PREADV)
			rw_walk_iovec(w, buf, nbytes, (__u64)res, buf_index, dir);
	}
#endif
}

/* Whether a field ending `end` bytes into the struct the buffer reads
 * fields of lies within the size the program gave the kernel. */
RW_INLINE int rw_field_within(const struct rw_buf_spec *b, const __u64 *args, __u64 end)
{
	return b->within_arg >= RW_MAX_ARGS || end <= args[b->within_arg];
}

/* Reads a u32 field; a field the call could not have read (it failed)
 * reads as absent, one it read as a fault. 0: *v holds it. */
RW_INLINE int rw_read_field(struct rw_walk *w, __u64 addr, __u32 *v)
{
	if (!RW_READ_USER(w, v, sizeof(*v), addr))
		return 0;
	if (w->ret >= 0)
		RW_WALK_STATUS(w) = RW_WALK_FAULT;
	return 1;
}

RW_INLINE int rw_buf_applies(struct rw_walk *w, const struct rw_buf_spec *b)
{
	const __u64 *args = w->args;
	__s64 ret = w->ret;
	__u32 v;

	if ((b->flags & RW_BUF_ON_SUCCESS) && ret < 0)
		return 0;
	if ((b->flags & RW_BUF_ON_ERROR) && ret >= 0)
		return 0;
	if (b->kind == RW_SZ_NONE || b->ptr_arg >= RW_MAX_ARGS)
		return 0;
	if (!b->when_bits)
		return 1;
	if (b->when_arg >= RW_MAX_ARGS)
		return 0;
	switch (b->when_how) {
	case RW_WHEN_EQUALS:
		return args[b->when_arg] == b->when_bits;
	case RW_WHEN_FIELD_EQUALS:
		if (!args[b->when_arg] || !rw_field_within(b, args, (__u64)b->when_off + 4))
			return 0;
		if (rw_read_field(w, args[b->when_arg] + b->when_off, &v))
			return 0;
		return v == b->when_bits;
	default:
		return (args[b->when_arg] & b->when_bits) != 0;
	}
}

/* Appends the segments of one buffer description. */
RW_INLINE void rw_walk_buffer(struct rw_walk *w, const struct rw_buf_spec *b, __u8 buf_index)
{
	const __u64 *args = w->args;
	__s64 ret = w->ret;
	__u8 dir = (b->flags & RW_BUF_OUT) ? RW_BUF_OUT : RW_BUF_IN;
	__u8 sa = b->size_arg < RW_MAX_ARGS ? b->size_arg : 0;
	__u64 ptr, mult, key, len = 0;
	__u32 u32v;

	if (!rw_buf_applies(w, b))
		return;
	ptr = args[b->ptr_arg];
	if (!ptr)
		return;
	if (b->ptr_how == RW_PTR_AT) {
		if (!rw_field_within(b, args, (__u64)b->ptr_off + 1))
			return;
		ptr += b->ptr_off;
	} else if (b->ptr_how == RW_PTR_LOADED) {
		if (!rw_field_within(b, args, (__u64)b->ptr_off + 8))
			return;
		if (RW_READ_USER(w, &ptr, sizeof(ptr), ptr + b->ptr_off)) {
			if (ret >= 0)
				RW_WALK_STATUS(w) = RW_WALK_FAULT;
			return;
		}
		if (!ptr)
			return;
	}
	mult = b->size ? b->size : 1;

	switch (b->kind) {
	case RW_SZ_FIXED:
		len = b->size;
		break;
	case RW_SZ_RET:
		len = ret > 0 ? (__u64)ret * mult : 0;
		break;
	case RW_SZ_ARG:
		len = args[sa] * mult;
		break;
	case RW_SZ_SOCKLEN:
	case RW_SZ_U32_AT_EXIT:
		if (!args[sa] || RW_READ_USER(w, &u32v, sizeof(u32v), args[sa])) {
			len = 0;
			break;
		}
		len = b->size ? rw_min(u32v, b->size) : u32v;
		break;
	case RW_SZ_FDSET:
		len = ((args[sa] + 63) / 64) * 8;
		break;
	case RW_SZ_IOVEC:
		/* Bytes transferred, in either direction, is the return value. */
		rw_walk_iovec(w, ptr, args[sa], ret > 0 ? (__u64)ret : 0, buf_index, dir);
		return;
	case RW_SZ_MSGHDR:
		rw_walk_msghdr(w, ptr, ret > 0 ? (__u64)ret : 0, buf_index, dir);
		return;
	case RW_SZ_MMSGHDR:
		rw_walk_mmsghdr(w, ptr, ret > 0 ? (__u64)ret : 0, buf_index, dir);
		return;
	case RW_SZ_CSTRING:
		rw_push(w, ptr, b->size ? b->size : RW_MAX_STRING, buf_index, dir, RW_SEG_STRING);
		return;
	case RW_SZ_IOCTL: {
		__u64 cmd = args[1];

		if (RW_IOC_DIR(cmd) & (dir == RW_BUF_OUT ? RW_IOC_READ : RW_IOC_WRITE))
			len = RW_IOC_SIZE(cmd);
		break;
	}
	case RW_SZ_FIELD:
		if (!args[sa] || !rw_field_within(b, args, (__u64)b->size_off + 4))
			return;
		if (rw_read_field(w, args[sa] + b->size_off, &u32v))
			return;
		len = (__u64)u32v * mult;
		break;
	case RW_SZ_RET_CAPPED:
		len = ret > 0 ? rw_min((__u64)ret, args[sa]) : 0;
		break;
	case RW_SZ_RET_IF_FITS:
		len = ret > 0 && (__u64)ret <= args[sa] ? (__u64)ret : 0;
		break;
	case RW_SZ_PAGES:
		len = (args[sa] + 4095) / 4096;
		break;
	case RW_SZ_STATE:
		key = args[sa];
		if (b->flags & RW_BUF_KEY_IN_FIELD) {
			if (!key || !rw_field_within(b, args, (__u64)b->size_off + 4))
				return;
			if (rw_read_field(w, key + b->size_off, &u32v))
				return;
			key = u32v;
		}
		if (RW_STATE_SIZE(w, b->size, key, &len)) {
			RW_WALK_STATUS(w) = RW_WALK_UNSIZED;
			return;
		}
		break;
	case RW_SZ_MMSG_LEN:
		rw_walk_mmsg_len(w, ptr, ret > 0 ? (__u64)ret : 0, buf_index, dir);
		return;
	case RW_SZ_IO_EVENTS:
		rw_walk_io_events(w, ptr, ret > 0 ? (__u64)ret : 0, buf_index, dir);
		return;
	default:
		return;
	}
	if (b->cap && len > b->cap)
		len = b->cap;
	/* A field of the struct itself: no further than the program's size. */
	if (b->ptr_how == RW_PTR_AT && b->within_arg < RW_MAX_ARGS &&
	    len > args[b->within_arg] - b->ptr_off)
		len = args[b->within_arg] - b->ptr_off;
	rw_push(w, ptr, len, buf_index, dir, 0);
}

/* Walks every buffer of a syscall; the result is in w->segs / w->nsegs. */
RW_INLINE int rw_walk_syscall(struct rw_walk *w, const struct rw_buf_spec *bufs, __u32 nbufs)
{
	__u32 i;

	RW_WALK_COUNT(w) = 0;
	RW_WALK_STATUS(w) = RW_WALK_OK;
	for (i = 0; i < RW_MAX_BUFS && i < nbufs; i++) {
		rw_walk_buffer(w, &bufs[i], (__u8)i);
		if (RW_WALK_STATUS(w))
			break;
	}
	return (int)RW_WALK_STATUS(w);
}

#endif /* REWIND_BUFFER_WALK_H */
