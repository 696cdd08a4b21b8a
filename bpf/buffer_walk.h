/* rewind — from a syscall's buffer description to the user memory it names.
 *
 * One walker, two compilers: the BPF capture program includes this file to
 * copy buffers at sys_exit, and the supervisor includes it to rebuild an
 * event from a stopped thread's memory when the kernel side stalled. Both
 * therefore agree byte for byte on what a syscall wrote.
 *
 * The includer defines, before including:
 *   RW_READ_USER(walk, dst, size, user_addr)  -> 0 on success
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

#if !defined(RW_WALK_MAX_SEGMENTS) || !defined(RW_WALK_MAX_IOV)
#error "define RW_WALK_MAX_SEGMENTS and RW_WALK_MAX_IOV before including buffer_walk.h"
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

/* Where the walk counts its segments. The BPF includer keeps the count in
 * map memory, whose contents the verifier does not track: counted on the
 * stack, each round of a bpf_loop saw another count, and the verifier
 * explored every one (sys_exit's program took 70,000 instructions and a
 * fifth of a second to load, most of a short recording's start-up). */
#ifndef RW_WALK_COUNT
#define RW_WALK_COUNT(w) ((w)->nsegs)
#endif

RW_INLINE void rw_push(struct rw_walk *w, __u64 addr, __u64 len, __u8 buf_index, __u8 dir,
		       __u8 seg_flags)
{
	__u32 i = RW_WALK_COUNT(w);

	if (!addr || !len)
		return;
	if (i >= RW_WALK_MAX_SEGMENTS) {
		w->status = RW_WALK_TOO_COMPLEX;
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
		c->w->status = RW_WALK_FAULT;
		return 1;
	}
	take = rw_min(iov.len, c->limit);
	rw_push(c->w, iov.base, take, c->buf_index, c->dir, 0);
	if (c->w->status)
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
		w->status = RW_WALK_TOO_COMPLEX;
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
			w->status = RW_WALK_FAULT;
			return;
		}
		__u64 take = rw_min(iov.len, limit);
		rw_push(w, iov.base, take, buf_index, dir, 0);
		if (w->status)
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
		w->status = RW_WALK_FAULT;
		return;
	}
	if (dir == RW_BUF_OUT) {
		/* The kernel writes back these three fields. */
		rw_push(w, addr + RW_MSG_NAMELEN_OFF, 4, buf_index, dir, 0);
		rw_push(w, addr + RW_MSG_CONTROLLEN_OFF, 8, buf_index, dir, 0);
		rw_push(w, addr + RW_MSG_FLAGS_OFF, 4, buf_index, dir, 0);
	}
	rw_push(w, m.name, rw_min(m.namelen, RW_SOCKADDR_CAP), buf_index, dir, 0);
	if (w->status)
		return;
	rw_walk_iovec(w, m.iov, m.iovlen, data_limit, buf_index, dir);
	if (w->status)
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
		w->status = RW_WALK_TOO_COMPLEX;
#else
	__u64 i;

	for (i = 0; i < count && i < RW_UIO_MAXIOV && !w->status; i++) {
		__u64 msg = addr + i * RW_MMSGHDR_SIZE;
		__u32 msg_len;

		if (RW_READ_USER(w, &msg_len, sizeof(msg_len), msg + RW_MMSG_LEN_OFF)) {
			w->status = RW_WALK_FAULT;
			return;
		}
		if (dir == RW_BUF_OUT)
			rw_push(w, msg + RW_MMSG_LEN_OFF, 4, buf_index, dir, 0);
		rw_walk_msghdr(w, msg, msg_len, buf_index, dir);
	}
#endif
}

RW_INLINE int rw_buf_applies(const struct rw_buf_spec *b, const __u64 *args, __s64 ret)
{
	if ((b->flags & RW_BUF_ON_SUCCESS) && ret < 0)
		return 0;
	if ((b->flags & RW_BUF_ON_ERROR) && ret >= 0)
		return 0;
	if (b->when_bits && (b->when_arg >= RW_MAX_ARGS || !(args[b->when_arg] & b->when_bits)))
		return 0;
	return b->kind != RW_SZ_NONE && b->ptr_arg < RW_MAX_ARGS;
}

/* Appends the segments of one buffer description. */
RW_INLINE void rw_walk_buffer(struct rw_walk *w, const struct rw_buf_spec *b, __u8 buf_index)
{
	const __u64 *args = w->args;
	__s64 ret = w->ret;
	__u8 dir = (b->flags & RW_BUF_OUT) ? RW_BUF_OUT : RW_BUF_IN;
	__u8 sa = b->size_arg < RW_MAX_ARGS ? b->size_arg : 0;
	__u64 ptr, mult, len = 0;
	__u32 u32v;

	if (!rw_buf_applies(b, args, ret))
		return;
	ptr = args[b->ptr_arg];
	if (!ptr)
		return;
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
	default:
		return;
	}
	rw_push(w, ptr, len, buf_index, dir, 0);
}

/* Walks every buffer of a syscall; the result is in w->segs / w->nsegs. */
RW_INLINE int rw_walk_syscall(struct rw_walk *w, const struct rw_buf_spec *bufs, __u32 nbufs)
{
	__u32 i;

	RW_WALK_COUNT(w) = 0;
	w->status = RW_WALK_OK;
	for (i = 0; i < RW_MAX_BUFS && i < nbufs; i++) {
		rw_walk_buffer(w, &bufs[i], (__u8)i);
		if (w->status)
			break;
	}
	return (int)w->status;
}

#endif /* REWIND_BUFFER_WALK_H */
