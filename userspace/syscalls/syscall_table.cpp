// The syscall table itself. Sizes are x86-64 kernel layouts.
#include "syscall_table.h"

#include <sched.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <unordered_map>
#include <vector>

namespace rw {
namespace {

// ---- building blocks ------------------------------------------------------

constexpr uint8_t kOut = RW_BUF_OUT;
constexpr uint8_t kIn = RW_BUF_IN;
constexpr uint8_t kOk = RW_BUF_ON_SUCCESS;
constexpr uint8_t kErr = RW_BUF_ON_ERROR;

constexpr rw_buf_spec buf(uint8_t kind, int ptr, int size_arg, uint8_t flags, uint32_t size)
{
    rw_buf_spec b{};
    b.kind = kind;
    b.ptr_arg = static_cast<uint8_t>(ptr);
    b.size_arg = static_cast<uint8_t>(size_arg);
    b.flags = flags;
    b.size = size;
    b.within_arg = RW_NO_ARG;
    return b;
}

// The buffer is there only when args[arg] has one of `bits`.
constexpr rw_buf_spec when(int arg, uint32_t bits, rw_buf_spec b)
{
    b.when_arg = static_cast<uint8_t>(arg);
    b.when_bits = bits;
    return b;
}

// The buffer is there only when the u32 `off` bytes into the struct at
// args[arg] is `value` (a struct's kind field).
constexpr rw_buf_spec when_field(int arg, uint16_t off, uint32_t value, rw_buf_spec b)
{
    b.when_arg = static_cast<uint8_t>(arg);
    b.when_how = RW_WHEN_FIELD_EQUALS;
    b.when_off = off;
    b.when_bits = value;
    return b;
}

// The buffer's pointer is the u64 `off` bytes into the struct at
// args[ptr_arg] (a pointer field: bpf_attr's, ifconf's).
constexpr rw_buf_spec via(uint16_t off, rw_buf_spec b)
{
    b.ptr_how = RW_PTR_LOADED;
    b.ptr_off = off;
    return b;
}

// The buffer starts `off` bytes into the struct at args[ptr_arg] (a field
// the kernel writes back, an array that follows a header).
constexpr rw_buf_spec at(uint16_t off, rw_buf_spec b)
{
    b.ptr_how = RW_PTR_AT;
    b.ptr_off = off;
    return b;
}

// The fields read out of the struct count only within args[arg] bytes, the
// size the program gave (the kernel reads the rest as zeros).
constexpr rw_buf_spec within(int arg, rw_buf_spec b)
{
    b.within_arg = static_cast<uint8_t>(arg);
    return b;
}

// At most `bytes`.
constexpr rw_buf_spec capped(uint32_t bytes, rw_buf_spec b)
{
    b.cap = bytes;
    return b;
}

// Kept whole in the trace (an input replay reads, not only checks).
constexpr rw_buf_spec kept(rw_buf_spec b)
{
    b.flags |= RW_BUF_KEEP;
    return b;
}

// Sized by the u32 `off` bytes into the struct at args[struct_arg] as the
// call leaves it (× element).
constexpr rw_buf_spec out_field_sized(int ptr, int struct_arg, uint16_t off, uint32_t element = 0)
{
    rw_buf_spec b = buf(RW_SZ_FIELD, ptr, struct_arg, kOut | kOk, element);
    b.size_off = off;
    return b;
}
constexpr rw_buf_spec in_field_sized(int ptr, int struct_arg, uint16_t off, uint32_t element = 0)
{
    rw_buf_spec b = buf(RW_SZ_FIELD, ptr, struct_arg, kIn, element);
    b.size_off = off;
    return b;
}

// Sized by kernel state: `which` of the object whose key is args[key_arg],
// or the u32 `key_off` bytes into the struct there.
constexpr rw_buf_spec state_sized(uint8_t dir, int ptr, rw_state which, int key_arg, int key_off = -1)
{
    rw_buf_spec b = buf(RW_SZ_STATE, ptr, key_arg, static_cast<uint8_t>(dir == kOut ? kOut | kOk : kIn), which);
    if (key_off >= 0) {
        b.flags |= RW_BUF_KEY_IN_FIELD;
        b.size_off = static_cast<uint16_t>(key_off);
    }
    return b;
}

// Written by the kernel.
constexpr rw_buf_spec out_fixed(int ptr, uint32_t size)
{
    return buf(RW_SZ_FIXED, ptr, 0, kOut | kOk, size);
}
constexpr rw_buf_spec out_fixed_always(int ptr, uint32_t size)
{
    return buf(RW_SZ_FIXED, ptr, 0, kOut, size);
}
constexpr rw_buf_spec out_fixed_on_error(int ptr, uint32_t size)
{
    return buf(RW_SZ_FIXED, ptr, 0, kOut | kErr, size);
}
constexpr rw_buf_spec out_ret(int ptr, uint32_t element = 0)
{
    return buf(RW_SZ_RET, ptr, 0, kOut | kOk, element);
}
constexpr rw_buf_spec out_arg(int ptr, int size_arg, uint32_t element = 0)
{
    return buf(RW_SZ_ARG, ptr, size_arg, kOut | kOk, element);
}
constexpr rw_buf_spec out_socklen(int ptr, int len_ptr, uint32_t cap = 128)
{
    return buf(RW_SZ_SOCKLEN, ptr, len_ptr, kOut | kOk, cap);
}
constexpr rw_buf_spec out_fdset(int ptr, int nfds_arg)
{
    return buf(RW_SZ_FDSET, ptr, nfds_arg, kOut | kOk, 0);
}
constexpr rw_buf_spec out_iovec(int ptr, int count_arg)
{
    return buf(RW_SZ_IOVEC, ptr, count_arg, kOut | kOk, 0);
}
constexpr rw_buf_spec out_msghdr(int ptr)
{
    return buf(RW_SZ_MSGHDR, ptr, 0, kOut | kOk, 0);
}
constexpr rw_buf_spec out_mmsghdr(int ptr)
{
    return buf(RW_SZ_MMSGHDR, ptr, 0, kOut | kOk, 0);
}
constexpr rw_buf_spec out_ioctl()
{
    return buf(RW_SZ_IOCTL, 2, 0, kOut | kOk, 0);
}

// Read by the kernel: replay checks the program passes the same bytes.
constexpr rw_buf_spec in_str(int ptr)
{
    return buf(RW_SZ_CSTRING, ptr, 0, kIn, RW_MAX_STRING);
}
constexpr rw_buf_spec in_str_on_error(int ptr)
{
    return buf(RW_SZ_CSTRING, ptr, 0, kIn | kErr, RW_MAX_STRING);
}
constexpr rw_buf_spec in_fixed(int ptr, uint32_t size)
{
    return buf(RW_SZ_FIXED, ptr, 0, kIn, size);
}
constexpr rw_buf_spec in_arg(int ptr, int size_arg, uint32_t element = 0)
{
    return buf(RW_SZ_ARG, ptr, size_arg, kIn, element);
}
constexpr rw_buf_spec in_ret(int ptr)
{
    return buf(RW_SZ_RET, ptr, 0, kIn | kOk, 0);
}
constexpr rw_buf_spec in_iovec(int ptr, int count_arg)
{
    return buf(RW_SZ_IOVEC, ptr, count_arg, kIn | kOk, 0);
}
constexpr rw_buf_spec in_msghdr(int ptr)
{
    return buf(RW_SZ_MSGHDR, ptr, 0, kIn | kOk, 0);
}
constexpr rw_buf_spec in_mmsghdr(int ptr)
{
    return buf(RW_SZ_MMSGHDR, ptr, 0, kIn | kOk, 0);
}
constexpr rw_buf_spec in_ioctl()
{
    return buf(RW_SZ_IOCTL, 2, 0, kIn, 0);
}

constexpr rw_sys_spec spec(std::initializer_list<rw_buf_spec> bufs, uint8_t flags = 0)
{
    rw_sys_spec s{};
    s.flags = static_cast<uint8_t>(RW_SYS_KNOWN | flags);
    for (const auto& b : bufs)
        s.bufs[s.nbufs++] = b;
    return s;
}

constexpr rw_sys_spec dispatch(int arg, uint8_t mask_bits = 0, std::initializer_list<rw_buf_spec> fallback = {})
{
    rw_sys_spec s = spec(fallback, RW_SYS_DISPATCH);
    s.dispatch_arg = static_cast<uint8_t>(arg);
    s.dispatch_mask_bits = mask_bits;
    return s;
}

using R = ReplayAction;

SyscallInfo sys(int nr, std::string_view name, std::string_view args, R replay,
                std::initializer_list<rw_buf_spec> bufs = {}, int fd_arg = -1)
{
    return SyscallInfo{nr, name, args, replay, spec(bufs), static_cast<int8_t>(fd_arg)};
}

SyscallInfo sys_spec(int nr, std::string_view name, std::string_view args, R replay, rw_sys_spec s)
{
    return SyscallInfo{nr, name, args, replay, s, -1};
}

// Replay refuses a call that succeeded, for `why` (shown by `rewind info`).
SyscallInfo refused(std::string_view why, SyscallInfo info)
{
    info.refusal = why;
    return info;
}

SyscallInfo with(FdEffect effect, SyscallInfo info)
{
    info.fd_effect = effect;
    return info;
}

// The syscall never blocks: a thread of a serialized process runs through
// it without a stop (thread_scheduler.h).
SyscallInfo keeps(SyscallInfo info)
{
    info.blocking = Blocking::Never;
    return info;
}

// Blocks only on a descriptor that can block (a pipe, a socket, a
// terminal…); on a regular file it never waits for another thread.
SyscallInfo fd_io(SyscallInfo info)
{
    info.blocking = Blocking::OnDescriptor;
    return info;
}

// Reads a file into its first buffer, at args[offset_arg] or at the file
// position (RW_OFFSET_FILE_POS): recorded by reference where the trace holds
// the file (capture.bpf.c, read_by_reference).
SyscallInfo reads_file(SyscallInfo info, uint8_t offset_arg)
{
    info.spec.flags |= RW_SYS_READS_FILE;
    info.spec.offset_arg = offset_arg;
    return info;
}

// Writes or resizes args[0]'s file, at args[offset_arg], at the file
// position (RW_OFFSET_FILE_POS) or nowhere (RW_OFFSET_NONE: a new size):
// noted where a process has the file mapped (capture.bpf.c,
// note_mapped_write), for replay to change its copy as the kernel did.
SyscallInfo writes_file(SyscallInfo info, uint8_t offset_arg)
{
    info.spec.flags |= RW_SYS_WRITES_FILE;
    info.spec.offset_arg = offset_arg;
    return info;
}

// Only reads state when args[arg] is 0 (SyscallInfo::query_when_null).
SyscallInfo query_when_null(uint8_t arg, SyscallInfo info)
{
    info.query_when_null = static_cast<int8_t>(arg);
    return info;
}

constexpr FdEffect kNewFd = FdEffect::NewFd;

// Sizes of kernel structures on x86-64.
constexpr uint32_t kStat = 144, kStatx = 256, kStatfs = 120, kTimespec = 16, kTimeval = 16, kTimezone = 8,
                   kUtsname = 390, kSysinfo = 112, kRlimit = 16, kRusage = 144, kTms = 32, kKSigaction = 32,
                   kStackT = 24, kSiginfo = 128, kItimer = 32, kFlock = 32, kEpollEvent = 12, kTermios = 36,
                   kWinsize = 8, kIfreq = 40, kSigevent = 64, kCapData = 24, kShmidDs = 112;
// perf_event_attr's first version, which the kernel reads at least; a page.
constexpr uint32_t kPerfAttrVer0 = 64, kPageSize = 4096;
// System V IPC (the 64-bit layouts) and POSIX message queues.
constexpr uint32_t kMsqidDs = 120, kMsginfo = 32, kSemidDs = 104, kSeminfo = 40, kShminfo = 72, kShmInfo = 48,
                   kMqAttr = 64;

// Why calls that share memory or state with the kernel outside any syscall
// cannot be replayed.
constexpr std::string_view kSharedSegment =
    "it attaches or detaches System V shared memory, whose pages other processes (recorded or not) may write at "
    "any moment: rewind does not reproduce memory shared that way";
constexpr std::string_view kIoUring =
    "io_uring shares its rings with the kernel, which fills them as requests complete, outside any syscall";

// O_CREAT: mq_open reads its attributes.
constexpr uint32_t kOCreat = 0100;
// struct sigevent's sigev_notify, SIGEV_THREAD, and the cookie mq_notify
// reads for it (NOTIFY_COOKIE_LEN).
constexpr uint16_t kSigevNotifyOff = 12;
constexpr uint32_t kSigevThread = 2, kNotifyCookie = 32;

const std::vector<SyscallInfo>& table()
{
    static const std::vector<SyscallInfo> t = {
        // ---- file I/O ------------------------------------------------------
        reads_file(fd_io(sys(SYS_read, "read", "fpu", R::Emulate, {out_ret(1)})), RW_OFFSET_FILE_POS),
        writes_file(fd_io(sys(SYS_write, "write", "fpu", R::Emulate, {in_ret(1)}, 0)), RW_OFFSET_FILE_POS),
        reads_file(fd_io(sys(SYS_pread64, "pread64", "fpul", R::Emulate, {out_ret(1)})), 3),
        writes_file(fd_io(sys(SYS_pwrite64, "pwrite64", "fpul", R::Emulate, {in_ret(1)}, 0)), 3),
        fd_io(sys(SYS_readv, "readv", "fpd", R::Emulate, {out_iovec(1, 2)})),
        writes_file(fd_io(sys(SYS_writev, "writev", "fpd", R::Emulate, {in_iovec(1, 2)}, 0)), RW_OFFSET_FILE_POS),
        fd_io(sys(SYS_preadv, "preadv", "fpdll", R::Emulate, {out_iovec(1, 2)})),
        writes_file(fd_io(sys(SYS_pwritev, "pwritev", "fpdll", R::Emulate, {in_iovec(1, 2)}, 0)), 3),
        fd_io(sys(SYS_preadv2, "preadv2", "fpdllx", R::Emulate, {out_iovec(1, 2)})),
        writes_file(fd_io(sys(SYS_pwritev2, "pwritev2", "fpdllx", R::Emulate, {in_iovec(1, 2)}, 0)), 3),
        with(kNewFd, sys(SYS_open, "open", "sxo", R::Emulate, {in_str(0)})),
        with(kNewFd, sys(SYS_openat, "openat", "fsxo", R::Emulate, {in_str(1)})),
        with(kNewFd, sys(SYS_openat2, "openat2", "fspu", R::Emulate, {in_str(1), in_arg(2, 3)})),
        with(kNewFd, sys(SYS_creat, "creat", "so", R::Emulate, {in_str(0)})),
        keeps(with(FdEffect::Close, sys(SYS_close, "close", "f", R::Emulate))),
        with(FdEffect::CloseRange, sys(SYS_close_range, "close_range", "uux", R::Emulate)),
        keeps(sys(SYS_lseek, "lseek", "fld", R::Emulate)),
        keeps(with(FdEffect::Dup, sys(SYS_dup, "dup", "f", R::Emulate))),
        keeps(with(FdEffect::Dup2, sys(SYS_dup2, "dup2", "ff", R::Emulate))),
        keeps(with(FdEffect::Dup2, sys(SYS_dup3, "dup3", "ffx", R::Emulate))),
        with(FdEffect::NewFdPair, sys(SYS_pipe, "pipe", "p", R::Emulate, {out_fixed(0, 8)})),
        with(FdEffect::NewFdPair, sys(SYS_pipe2, "pipe2", "px", R::Emulate, {out_fixed(0, 8)})),
        sys(SYS_sendfile, "sendfile", "ffpu", R::Emulate, {out_fixed(2, 8)}),
        sys(SYS_splice, "splice", "fpfpux", R::Emulate, {out_fixed(1, 8), out_fixed(3, 8)}),
        sys(SYS_tee, "tee", "ffux", R::Emulate),
        sys(SYS_vmsplice, "vmsplice", "fpux", R::Emulate, {in_iovec(1, 2)}),
        sys(SYS_copy_file_range, "copy_file_range", "fpfpux", R::Emulate, {out_fixed(1, 8), out_fixed(3, 8)}),
        sys(SYS_fsync, "fsync", "f", R::Emulate),
        sys(SYS_fdatasync, "fdatasync", "f", R::Emulate),
        sys(SYS_sync, "sync", "", R::Emulate),
        sys(SYS_syncfs, "syncfs", "f", R::Emulate),
        sys(SYS_sync_file_range, "sync_file_range", "fllx", R::Emulate),
        writes_file(sys(SYS_fallocate, "fallocate", "fxll", R::Emulate), RW_OFFSET_NONE),
        sys(SYS_fadvise64, "fadvise64", "flld", R::Emulate),
        sys(SYS_readahead, "readahead", "flu", R::Emulate),
        sys(SYS_flock, "flock", "fx", R::Emulate),
        writes_file(sys(SYS_ftruncate, "ftruncate", "fl", R::Emulate), RW_OFFSET_NONE),
        sys(SYS_truncate, "truncate", "sl", R::Emulate, {in_str(0)}),
        sys(SYS_getdents, "getdents", "fpu", R::Emulate, {out_ret(1)}),
        sys(SYS_getdents64, "getdents64", "fpu", R::Emulate, {out_ret(1)}),
        sys_spec(SYS_fcntl, "fcntl", "fdx", R::Emulate, dispatch(1)),
        sys_spec(SYS_ioctl, "ioctl", "fxp", R::Emulate, dispatch(1, 32, {out_ioctl(), in_ioctl()})),

        // ---- file metadata --------------------------------------------------
        sys(SYS_stat, "stat", "sp", R::Emulate, {in_str(0), out_fixed(1, kStat)}),
        sys(SYS_lstat, "lstat", "sp", R::Emulate, {in_str(0), out_fixed(1, kStat)}),
        keeps(sys(SYS_fstat, "fstat", "fp", R::Emulate, {out_fixed(1, kStat)})),
        keeps(sys(SYS_newfstatat, "newfstatat", "fspx", R::Emulate, {in_str(1), out_fixed(2, kStat)})),
        keeps(sys(SYS_statx, "statx", "fsxxp", R::Emulate, {in_str(1), out_fixed(4, kStatx)})),
        sys(SYS_statfs, "statfs", "sp", R::Emulate, {in_str(0), out_fixed(1, kStatfs)}),
        sys(SYS_fstatfs, "fstatfs", "fp", R::Emulate, {out_fixed(1, kStatfs)}),
        sys(SYS_access, "access", "so", R::Emulate, {in_str(0)}),
        sys(SYS_faccessat, "faccessat", "fso", R::Emulate, {in_str(1)}),
        sys(SYS_faccessat2, "faccessat2", "fsox", R::Emulate, {in_str(1)}),
        sys(SYS_readlink, "readlink", "spu", R::Emulate, {in_str(0), out_ret(1)}),
        sys(SYS_readlinkat, "readlinkat", "fspu", R::Emulate, {in_str(1), out_ret(2)}),
        keeps(sys(SYS_getcwd, "getcwd", "pu", R::Emulate, {out_ret(0)})),
        sys(SYS_chdir, "chdir", "s", R::Emulate, {in_str(0)}),
        sys(SYS_fchdir, "fchdir", "f", R::Emulate),
        sys(SYS_chroot, "chroot", "s", R::Emulate, {in_str(0)}),
        sys(SYS_mkdir, "mkdir", "so", R::Emulate, {in_str(0)}),
        sys(SYS_mkdirat, "mkdirat", "fso", R::Emulate, {in_str(1)}),
        sys(SYS_rmdir, "rmdir", "s", R::Emulate, {in_str(0)}),
        sys(SYS_unlink, "unlink", "s", R::Emulate, {in_str(0)}),
        sys(SYS_unlinkat, "unlinkat", "fsx", R::Emulate, {in_str(1)}),
        sys(SYS_rename, "rename", "ss", R::Emulate, {in_str(0), in_str(1)}),
        sys(SYS_renameat, "renameat", "fsfs", R::Emulate, {in_str(1), in_str(3)}),
        sys(SYS_renameat2, "renameat2", "fsfsx", R::Emulate, {in_str(1), in_str(3)}),
        sys(SYS_link, "link", "ss", R::Emulate, {in_str(0), in_str(1)}),
        sys(SYS_linkat, "linkat", "fsfsx", R::Emulate, {in_str(1), in_str(3)}),
        sys(SYS_symlink, "symlink", "ss", R::Emulate, {in_str(0), in_str(1)}),
        sys(SYS_symlinkat, "symlinkat", "sfs", R::Emulate, {in_str(0), in_str(2)}),
        sys(SYS_chmod, "chmod", "so", R::Emulate, {in_str(0)}),
        sys(SYS_fchmod, "fchmod", "fo", R::Emulate),
        sys(SYS_fchmodat, "fchmodat", "fso", R::Emulate, {in_str(1)}),
        sys(452, "fchmodat2", "fsox", R::Emulate, {in_str(1)}),
        sys(SYS_chown, "chown", "sdd", R::Emulate, {in_str(0)}),
        sys(SYS_lchown, "lchown", "sdd", R::Emulate, {in_str(0)}),
        sys(SYS_fchown, "fchown", "fdd", R::Emulate),
        sys(SYS_fchownat, "fchownat", "fsddx", R::Emulate, {in_str(1)}),
        sys(SYS_utime, "utime", "sp", R::Emulate, {in_str(0), in_fixed(1, 16)}),
        sys(SYS_utimes, "utimes", "sp", R::Emulate, {in_str(0), in_fixed(1, 2 * kTimeval)}),
        sys(SYS_futimesat, "futimesat", "fsp", R::Emulate, {in_str(1), in_fixed(2, 2 * kTimeval)}),
        sys(SYS_utimensat, "utimensat", "fspx", R::Emulate, {in_str(1), in_fixed(2, 2 * kTimespec)}),
        sys(SYS_mknod, "mknod", "sox", R::Emulate, {in_str(0)}),
        sys(SYS_mknodat, "mknodat", "fsox", R::Emulate, {in_str(1)}),
        sys(SYS_umask, "umask", "o", R::Emulate),
        sys(SYS_getxattr, "getxattr", "sspu", R::Emulate, {in_str(0), in_str(1), out_ret(2)}),
        sys(SYS_lgetxattr, "lgetxattr", "sspu", R::Emulate, {in_str(0), in_str(1), out_ret(2)}),
        sys(SYS_fgetxattr, "fgetxattr", "fspu", R::Emulate, {in_str(1), out_ret(2)}),
        sys(SYS_listxattr, "listxattr", "spu", R::Emulate, {in_str(0), out_ret(1)}),
        sys(SYS_llistxattr, "llistxattr", "spu", R::Emulate, {in_str(0), out_ret(1)}),
        sys(SYS_flistxattr, "flistxattr", "fpu", R::Emulate, {out_ret(1)}),
        sys(SYS_setxattr, "setxattr", "sspux", R::Emulate, {in_str(0), in_str(1), in_arg(2, 3)}),
        sys(SYS_lsetxattr, "lsetxattr", "sspux", R::Emulate, {in_str(0), in_str(1), in_arg(2, 3)}),
        sys(SYS_fsetxattr, "fsetxattr", "fspux", R::Emulate, {in_str(1), in_arg(2, 3)}),
        sys(SYS_removexattr, "removexattr", "ss", R::Emulate, {in_str(0), in_str(1)}),
        sys(SYS_lremovexattr, "lremovexattr", "ss", R::Emulate, {in_str(0), in_str(1)}),
        sys(SYS_fremovexattr, "fremovexattr", "fs", R::Emulate, {in_str(1)}),
        sys(SYS_mount, "mount", "sssxp", R::Emulate, {in_str(0), in_str(1), in_str(2)}),
        sys(SYS_umount2, "umount2", "sx", R::Emulate, {in_str(0)}),
        with(kNewFd, sys(SYS_inotify_init, "inotify_init", "", R::Emulate)),
        with(kNewFd, sys(SYS_inotify_init1, "inotify_init1", "x", R::Emulate)),
        sys(SYS_inotify_add_watch, "inotify_add_watch", "fsx", R::Emulate, {in_str(1)}),
        sys(SYS_inotify_rm_watch, "inotify_rm_watch", "fd", R::Emulate),
        with(kNewFd, sys(SYS_memfd_create, "memfd_create", "sx", R::Emulate, {in_str(0)})),

        // ---- polling and event descriptors ---------------------------------
        sys(SYS_poll, "poll", "pdd", R::Emulate, {out_arg(0, 1, 8)}),
        sys(SYS_ppoll, "ppoll", "pdppu", R::Emulate, {out_arg(0, 1, 8), out_fixed(2, kTimespec)}),
        sys(SYS_select, "select", "dpppp", R::Emulate,
            {out_fdset(1, 0), out_fdset(2, 0), out_fdset(3, 0), out_fixed(4, kTimeval)}),
        sys(SYS_pselect6, "pselect6", "dppppp", R::Emulate,
            {out_fdset(1, 0), out_fdset(2, 0), out_fdset(3, 0), out_fixed(4, kTimespec)}),
        with(kNewFd, sys(SYS_epoll_create, "epoll_create", "d", R::Emulate)),
        with(kNewFd, sys(SYS_epoll_create1, "epoll_create1", "x", R::Emulate)),
        sys(SYS_epoll_ctl, "epoll_ctl", "fdfp", R::Emulate, {in_fixed(3, kEpollEvent)}),
        sys(SYS_epoll_wait, "epoll_wait", "fpdd", R::Emulate, {out_ret(1, kEpollEvent)}),
        sys(SYS_epoll_pwait, "epoll_pwait", "fpddpu", R::Emulate, {out_ret(1, kEpollEvent)}),
        sys(SYS_epoll_pwait2, "epoll_pwait2", "fpdppu", R::Emulate, {out_ret(1, kEpollEvent)}),
        with(kNewFd, sys(SYS_eventfd, "eventfd", "u", R::Emulate)),
        with(kNewFd, sys(SYS_eventfd2, "eventfd2", "ux", R::Emulate)),
        with(kNewFd, sys(SYS_signalfd, "signalfd", "fpu", R::Emulate, {in_fixed(1, 8)})),
        with(kNewFd, sys(SYS_signalfd4, "signalfd4", "fpux", R::Emulate, {in_fixed(1, 8)})),
        with(kNewFd, sys(SYS_timerfd_create, "timerfd_create", "dx", R::Emulate)),
        sys(SYS_timerfd_settime, "timerfd_settime", "fxpp", R::Emulate, {in_fixed(2, kItimer), out_fixed(3, kItimer)}),
        sys(SYS_timerfd_gettime, "timerfd_gettime", "fp", R::Emulate, {out_fixed(1, kItimer)}),
        with(kNewFd, sys(SYS_pidfd_open, "pidfd_open", "dx", R::Emulate)),
        sys(SYS_pidfd_send_signal, "pidfd_send_signal", "fSpx", R::Emulate, {in_fixed(2, kSiginfo)}),
        with(kNewFd, sys(SYS_pidfd_getfd, "pidfd_getfd", "ffx", R::Emulate)),

        // ---- sockets --------------------------------------------------------
        with(kNewFd, sys(SYS_socket, "socket", "ddd", R::Emulate)),
        with(FdEffect::NewFdPair, sys(SYS_socketpair, "socketpair", "dddp", R::Emulate, {out_fixed(3, 8)})),
        sys(SYS_bind, "bind", "fpu", R::Emulate, {in_arg(1, 2)}),
        sys(SYS_connect, "connect", "fpu", R::Emulate, {in_arg(1, 2)}),
        sys(SYS_listen, "listen", "fd", R::Emulate),
        with(kNewFd, sys(SYS_accept, "accept", "fpp", R::Emulate, {out_socklen(1, 2), out_fixed(2, 4)})),
        with(kNewFd, sys(SYS_accept4, "accept4", "fppx", R::Emulate, {out_socklen(1, 2), out_fixed(2, 4)})),
        sys(SYS_getsockname, "getsockname", "fpp", R::Emulate, {out_socklen(1, 2), out_fixed(2, 4)}),
        sys(SYS_getpeername, "getpeername", "fpp", R::Emulate, {out_socklen(1, 2), out_fixed(2, 4)}),
        sys(SYS_getsockopt, "getsockopt", "fddpp", R::Emulate, {out_socklen(3, 4, 0), out_fixed(4, 4)}),
        sys(SYS_setsockopt, "setsockopt", "fddpu", R::Emulate, {in_arg(3, 4)}),
        sys(SYS_sendto, "sendto", "fpuxpu", R::Emulate, {in_ret(1), in_arg(4, 5)}, 0),
        sys(SYS_recvfrom, "recvfrom", "fpuxpp", R::Emulate, {out_ret(1), out_socklen(4, 5), out_fixed(5, 4)}),
        sys(SYS_sendmsg, "sendmsg", "fpx", R::Emulate, {in_msghdr(1)}, 0),
        sys(SYS_recvmsg, "recvmsg", "fpx", R::Emulate, {out_msghdr(1)}),
        sys(SYS_sendmmsg, "sendmmsg", "fpux", R::Emulate, {in_mmsghdr(1)}),
        sys(SYS_recvmmsg, "recvmmsg", "fpuxp", R::Emulate, {out_mmsghdr(1), out_fixed(4, kTimespec)}),
        sys(SYS_shutdown, "shutdown", "fd", R::Emulate),

        // ---- memory ---------------------------------------------------------
        keeps(sys_spec(SYS_mmap, "mmap", "pupxfl", R::Mmap, spec({}, RW_SYS_MAPS_FILE))),
        keeps(sys(SYS_munmap, "munmap", "pu", R::ExecuteCheck)),
        keeps(sys(SYS_mprotect, "mprotect", "pux", R::ExecuteCheck)),
        keeps(sys(SYS_mremap, "mremap", "puuxp", R::ExecuteCheck)),
        keeps(sys(SYS_madvise, "madvise", "pud", R::ExecuteCheck)),
        keeps(sys(SYS_brk, "brk", "p", R::ExecuteCheck)),
        sys(SYS_msync, "msync", "pux", R::Emulate),
        // Locked pages change what other calls do (MADV_DONTNEED refuses
        // them, after it has dropped the pages before them): locked in
        // replay too.
        sys(SYS_mlock, "mlock", "pu", R::ExecuteRestore),
        sys(SYS_mlock2, "mlock2", "pux", R::ExecuteRestore),
        sys(SYS_munlock, "munlock", "pu", R::ExecuteRestore),
        sys(SYS_mlockall, "mlockall", "x", R::ExecuteRestore),
        sys(SYS_munlockall, "munlockall", "", R::ExecuteRestore),
        sys(SYS_pkey_alloc, "pkey_alloc", "xx", R::ExecuteCheck),
        sys(SYS_pkey_free, "pkey_free", "d", R::ExecuteCheck),
        sys(SYS_pkey_mprotect, "pkey_mprotect", "puxd", R::ExecuteCheck),
        sys(SYS_membarrier, "membarrier", "xxd", R::Emulate),
        sys(SYS_mbind, "mbind", "puxpux", R::Emulate),
        sys(SYS_set_mempolicy, "set_mempolicy", "dpu", R::Emulate),
        sys(SYS_get_mempolicy, "get_mempolicy", "ppupx", R::Emulate, {out_fixed(0, 4), out_fdset(1, 2)}),
        sys(SYS_migrate_pages, "migrate_pages", "dupp", R::Emulate),
        sys(SYS_modify_ldt, "modify_ldt", "dpu", R::ExecuteCheck),
        refused("page faults in the ranges it registers wait, at any instruction, for another thread to answer "
                "them through its descriptor",
                with(kNewFd, sys(SYS_userfaultfd, "userfaultfd", "x", R::Refuse))),
        refused(kIoUring, with(kNewFd, sys(SYS_io_uring_setup, "io_uring_setup", "up", R::Refuse))),
        refused(kIoUring, sys(SYS_io_uring_enter, "io_uring_enter", "fuuxpu", R::Refuse)),
        refused(kIoUring, sys(SYS_io_uring_register, "io_uring_register", "fupu", R::Refuse)),
        sys(SYS_process_vm_readv, "process_vm_readv", "dpupux", R::Emulate, {out_iovec(1, 2)}),
        // The segment's id is served from the log; attaching it is refused.
        sys(SYS_shmget, "shmget", "xux", R::Emulate),
        refused(kSharedSegment, sys(SYS_shmat, "shmat", "dpx", R::Refuse)),
        refused(kSharedSegment, sys(SYS_shmdt, "shmdt", "p", R::Refuse)),
        sys_spec(SYS_shmctl, "shmctl", "ddp", R::Emulate, dispatch(1)),

        // ---- System V messages and semaphores, POSIX message queues ----------
        sys(SYS_msgget, "msgget", "xx", R::Emulate),
        // struct msgbuf: the type (a long), then the text.
        sys(SYS_msgsnd, "msgsnd", "dpux", R::Emulate, {in_fixed(1, 8), at(8, in_arg(1, 2))}),
        sys(SYS_msgrcv, "msgrcv", "dpulx", R::Emulate, {out_fixed(1, 8), at(8, out_ret(1))}),
        sys_spec(SYS_msgctl, "msgctl", "ddp", R::Emulate, dispatch(1)),
        sys(SYS_semget, "semget", "xdx", R::Emulate),
        sys(SYS_semop, "semop", "dpu", R::Emulate, {in_arg(1, 2, 6)}),
        sys(SYS_semtimedop, "semtimedop", "dpup", R::Emulate, {in_arg(1, 2, 6), in_fixed(3, kTimespec)}),
        sys_spec(SYS_semctl, "semctl", "dddp", R::Emulate, dispatch(2)),
        with(kNewFd,
             sys(SYS_mq_open, "mq_open", "sxop", R::Emulate, {in_str(0), when(1, kOCreat, in_fixed(3, kMqAttr))})),
        sys(SYS_mq_unlink, "mq_unlink", "s", R::Emulate, {in_str(0)}),
        sys(SYS_mq_timedsend, "mq_timedsend", "fpuup", R::Emulate, {in_arg(1, 2), in_fixed(4, kTimespec)}),
        sys(SYS_mq_timedreceive, "mq_timedreceive", "fpupp", R::Emulate,
            {out_ret(1), out_fixed(3, 4), in_fixed(4, kTimespec)}),
        // SIGEV_THREAD: the kernel reads a cookie at sigev_value, which its
        // netlink socket hands back with the notification.
        sys(SYS_mq_notify, "mq_notify", "fp", R::Emulate,
            {in_fixed(1, kSigevent), when_field(1, kSigevNotifyOff, kSigevThread, via(0, in_fixed(1, kNotifyCookie)))}),
        sys(SYS_mq_getsetattr, "mq_getsetattr", "fpp", R::Emulate, {in_fixed(1, kMqAttr), out_fixed(2, kMqAttr)}),

        // ---- processes and threads ------------------------------------------
        // The parent's memory gets the child's id (CLONE_PARENT_SETTID) or
        // a pidfd (CLONE_PIDFD) at ptid; ctid is written by the child, in
        // its own memory, when it first runs (replay stores it then).
        keeps(
            sys(SYS_clone, "clone", "xpppp", R::Clone, {when(0, CLONE_PARENT_SETTID | CLONE_PIDFD, out_fixed(2, 4))})),
        keeps(sys(SYS_clone3, "clone3", "pu", R::Clone, {in_arg(0, 1)})),
        keeps(sys(SYS_fork, "fork", "", R::Clone)),
        keeps(sys(SYS_vfork, "vfork", "", R::Clone)),
        keeps(sys(SYS_execve, "execve", "spp", R::Exec, {in_str_on_error(0)})),
        keeps(sys(SYS_execveat, "execveat", "fsppx", R::Exec, {in_str_on_error(1)})),
        keeps(sys(SYS_exit, "exit", "d", R::Exit)),
        keeps(sys(SYS_exit_group, "exit_group", "d", R::Exit)),
        sys(SYS_wait4, "wait4", "dpxp", R::Emulate, {out_fixed(1, 4), out_fixed(3, kRusage)}),
        sys(SYS_waitid, "waitid", "ddpxp", R::Emulate, {out_fixed(2, kSiginfo), out_fixed(4, kRusage)}),
        keeps(sys(SYS_set_tid_address, "set_tid_address", "p", R::ExecuteRestore)),
        keeps(sys(SYS_set_robust_list, "set_robust_list", "pu", R::ExecuteCheck)),
        keeps(sys(SYS_get_robust_list, "get_robust_list", "dpp", R::Emulate, {out_fixed(1, 8), out_fixed(2, 8)})),
        keeps(sys(SYS_rseq, "rseq", "puxx", R::Emulate)),
        keeps(sys_spec(SYS_arch_prctl, "arch_prctl", "xp", R::ExecuteCheck, dispatch(0))),
        keeps(sys_spec(SYS_prctl, "prctl", "xxxxx", R::Emulate, dispatch(0))),
        keeps(sys(SYS_getpid, "getpid", "", R::Emulate)),
        keeps(sys(SYS_getppid, "getppid", "", R::Emulate)),
        keeps(sys(SYS_gettid, "gettid", "", R::Emulate)),
        keeps(sys(SYS_getuid, "getuid", "", R::Emulate)),
        keeps(sys(SYS_geteuid, "geteuid", "", R::Emulate)),
        keeps(sys(SYS_getgid, "getgid", "", R::Emulate)),
        keeps(sys(SYS_getegid, "getegid", "", R::Emulate)),
        sys(SYS_getresuid, "getresuid", "ppp", R::Emulate, {out_fixed(0, 4), out_fixed(1, 4), out_fixed(2, 4)}),
        sys(SYS_getresgid, "getresgid", "ppp", R::Emulate, {out_fixed(0, 4), out_fixed(1, 4), out_fixed(2, 4)}),
        sys(SYS_getgroups, "getgroups", "dp", R::Emulate, {out_ret(1, 4)}),
        sys(SYS_setgroups, "setgroups", "dp", R::Emulate, {in_arg(1, 0, 4)}),
        sys(SYS_setuid, "setuid", "d", R::Emulate),
        sys(SYS_setgid, "setgid", "d", R::Emulate),
        sys(SYS_setreuid, "setreuid", "dd", R::Emulate),
        sys(SYS_setregid, "setregid", "dd", R::Emulate),
        sys(SYS_setresuid, "setresuid", "ddd", R::Emulate),
        sys(SYS_setresgid, "setresgid", "ddd", R::Emulate),
        sys(SYS_setfsuid, "setfsuid", "d", R::Emulate),
        sys(SYS_setfsgid, "setfsgid", "d", R::Emulate),
        sys(SYS_getpgrp, "getpgrp", "", R::Emulate),
        sys(SYS_getpgid, "getpgid", "d", R::Emulate),
        sys(SYS_setpgid, "setpgid", "dd", R::Emulate),
        sys(SYS_getsid, "getsid", "d", R::Emulate),
        sys(SYS_setsid, "setsid", "", R::Emulate),
        sys(SYS_capget, "capget", "pp", R::Emulate, {out_fixed(0, 8), out_fixed(1, kCapData)}),
        sys(SYS_capset, "capset", "pp", R::Emulate, {in_fixed(0, 8), in_fixed(1, kCapData)}),
        sys(SYS_personality, "personality", "x", R::Emulate),
        sys(SYS_unshare, "unshare", "x", R::Emulate),
        sys(SYS_setns, "setns", "fx", R::Emulate),
        sys(SYS_seccomp, "seccomp", "xxp", R::Emulate),
        sys(SYS_getpriority, "getpriority", "dd", R::Emulate),
        sys(SYS_ioprio_get, "ioprio_get", "dd", R::Emulate),
        sys(SYS_ioprio_set, "ioprio_set", "ddd", R::Emulate),
        sys(SYS_syslog, "syslog", "dpd", R::Emulate, {out_ret(1)}),
        sys(SYS_acct, "acct", "s", R::Emulate, {in_str(0)}),
        with(kNewFd, sys(SYS_fanotify_init, "fanotify_init", "xx", R::Emulate)),
        sys(SYS_fanotify_mark, "fanotify_mark", "fxxfs", R::Emulate, {in_str(4)}),
        sys(SYS_setpriority, "setpriority", "ddd", R::Emulate),
        refused("a tracer's requests act on another thread's state at its stops, which rewind does not record",
                sys(SYS_ptrace, "ptrace", "ddpp", R::Refuse)),
        // BPF: maps and programs live in the kernel; the replay serves what
        // the program learns of them (a map's values, a verifier's log).
        keeps(sys_spec(SYS_bpf, "bpf", "dpu", R::Emulate, dispatch(0))),
        // perf_event_attr: the first 64 bytes (PERF_ATTR_SIZE_VER0) at least,
        // its `size` field's worth (at most a page) if larger; on E2BIG the
        // kernel writes the size it knows into that field.
        keeps(with(kNewFd, sys(SYS_perf_event_open, "perf_event_open", "pddfx", R::Emulate,
                               {in_fixed(0, kPerfAttrVer0), capped(kPageSize, in_field_sized(0, 0, 4)),
                                at(4, out_fixed_on_error(0, 4))}))),
        sys(SYS_kcmp, "kcmp", "ddduu", R::Emulate),
        sys(SYS_process_madvise, "process_madvise", "fpudx", R::Emulate),
        sys(SYS_process_mrelease, "process_mrelease", "fx", R::Emulate),

        // ---- signals --------------------------------------------------------
        keeps(sys(SYS_rt_sigaction, "rt_sigaction", "Sppu", R::ExecuteCheck,
                  {in_fixed(1, kKSigaction), out_fixed(2, kKSigaction)})),
        query_when_null(1, keeps(sys(SYS_rt_sigprocmask, "rt_sigprocmask", "dppu", R::ExecuteCheck,
                                     {in_arg(1, 3), out_arg(2, 3)}))),
        sys(SYS_rt_sigreturn, "rt_sigreturn", "", R::Sigreturn),
        keeps(
            sys(SYS_sigaltstack, "sigaltstack", "pp", R::ExecuteCheck, {in_fixed(0, kStackT), out_fixed(1, kStackT)})),
        sys(SYS_rt_sigpending, "rt_sigpending", "pu", R::Emulate, {out_arg(0, 1)}),
        sys(SYS_rt_sigsuspend, "rt_sigsuspend", "pu", R::Emulate, {in_arg(0, 1)}),
        sys(SYS_rt_sigtimedwait, "rt_sigtimedwait", "pppu", R::Emulate, {in_arg(0, 3), out_fixed(1, kSiginfo)}),
        sys(SYS_rt_sigqueueinfo, "rt_sigqueueinfo", "dSp", R::Emulate, {in_fixed(2, kSiginfo)}),
        sys(SYS_rt_tgsigqueueinfo, "rt_tgsigqueueinfo", "ddSp", R::Emulate, {in_fixed(3, kSiginfo)}),
        sys(SYS_kill, "kill", "dS", R::Emulate),
        keeps(sys(SYS_tkill, "tkill", "dS", R::Emulate)),
        keeps(sys(SYS_tgkill, "tgkill", "ddS", R::Emulate)),
        sys(SYS_pause, "pause", "", R::Emulate),
        sys(SYS_restart_syscall, "restart_syscall", "", R::Emulate),

        // ---- time -----------------------------------------------------------
        keeps(sys(SYS_clock_gettime, "clock_gettime", "dp", R::Emulate, {out_fixed(1, kTimespec)})),
        keeps(sys(SYS_clock_getres, "clock_getres", "dp", R::Emulate, {out_fixed(1, kTimespec)})),
        sys(SYS_clock_settime, "clock_settime", "dp", R::Emulate, {in_fixed(1, kTimespec)}),
        sys(SYS_clock_nanosleep, "clock_nanosleep", "dxpp", R::Emulate,
            {in_fixed(2, kTimespec), out_fixed_on_error(3, kTimespec)}),
        sys(SYS_clock_adjtime, "clock_adjtime", "dp", R::Emulate, {out_fixed_always(1, 208)}),
        sys(SYS_adjtimex, "adjtimex", "p", R::Emulate, {out_fixed_always(0, 208)}),
        keeps(
            sys(SYS_gettimeofday, "gettimeofday", "pp", R::Emulate, {out_fixed(0, kTimeval), out_fixed(1, kTimezone)})),
        sys(SYS_settimeofday, "settimeofday", "pp", R::Emulate, {in_fixed(0, kTimeval)}),
        keeps(sys(SYS_time, "time", "p", R::Emulate, {out_fixed(0, 8)})),
        sys(SYS_times, "times", "p", R::Emulate, {out_fixed(0, kTms)}),
        sys(SYS_nanosleep, "nanosleep", "pp", R::Emulate, {in_fixed(0, kTimespec), out_fixed_on_error(1, kTimespec)}),
        sys(SYS_alarm, "alarm", "u", R::Emulate),
        sys(SYS_getitimer, "getitimer", "dp", R::Emulate, {out_fixed(1, kItimer)}),
        sys(SYS_setitimer, "setitimer", "dpp", R::Emulate, {in_fixed(1, kItimer), out_fixed(2, kItimer)}),
        sys(SYS_timer_create, "timer_create", "dpp", R::Emulate, {in_fixed(1, kSigevent), out_fixed(2, 4)}),
        sys(SYS_timer_settime, "timer_settime", "dxpp", R::Emulate, {in_fixed(2, kItimer), out_fixed(3, kItimer)}),
        sys(SYS_timer_gettime, "timer_gettime", "dp", R::Emulate, {out_fixed(1, kItimer)}),
        sys(SYS_timer_getoverrun, "timer_getoverrun", "d", R::Emulate),
        sys(SYS_timer_delete, "timer_delete", "d", R::Emulate),

        // ---- scheduling and synchronisation --------------------------------
        sys_spec(SYS_futex, "futex", "pxdppd", R::Emulate, dispatch(1, 7)),
        sys(SYS_futex_waitv, "futex_waitv", "puxpd", R::Emulate),
        sys(SYS_sched_yield, "sched_yield", "", R::Emulate),
        keeps(sys(SYS_sched_getaffinity, "sched_getaffinity", "dup", R::Emulate, {out_ret(2)})),
        keeps(sys(SYS_sched_setaffinity, "sched_setaffinity", "dup", R::Emulate, {in_arg(2, 1)})),
        sys(SYS_sched_getparam, "sched_getparam", "dp", R::Emulate, {out_fixed(1, 4)}),
        sys(SYS_sched_setparam, "sched_setparam", "dp", R::Emulate, {in_fixed(1, 4)}),
        sys(SYS_sched_getscheduler, "sched_getscheduler", "d", R::Emulate),
        sys(SYS_sched_setscheduler, "sched_setscheduler", "ddp", R::Emulate, {in_fixed(2, 4)}),
        sys(SYS_sched_get_priority_max, "sched_get_priority_max", "d", R::Emulate),
        sys(SYS_sched_get_priority_min, "sched_get_priority_min", "d", R::Emulate),
        sys(SYS_sched_rr_get_interval, "sched_rr_get_interval", "dp", R::Emulate, {out_fixed(1, kTimespec)}),
        sys(SYS_sched_getattr, "sched_getattr", "dpux", R::Emulate, {out_arg(1, 2)}),
        sys(SYS_sched_setattr, "sched_setattr", "dpx", R::Emulate),
        sys(SYS_getcpu, "getcpu", "ppp", R::Emulate, {out_fixed(0, 4), out_fixed(1, 4)}),

        // ---- system information ---------------------------------------------
        keeps(sys(SYS_uname, "uname", "p", R::Emulate, {out_fixed(0, kUtsname)})),
        keeps(sys(SYS_sysinfo, "sysinfo", "p", R::Emulate, {out_fixed(0, kSysinfo)})),
        keeps(sys(SYS_getrlimit, "getrlimit", "dp", R::Emulate, {out_fixed(1, kRlimit)})),
        // A process's own stack and data limits are set in replay too (replay_syscall.cpp).
        sys(SYS_setrlimit, "setrlimit", "dp", R::ExecuteRestore, {in_fixed(1, kRlimit)}),
        keeps(
            sys(SYS_prlimit64, "prlimit64", "ddpp", R::ExecuteRestore, {in_fixed(2, kRlimit), out_fixed(3, kRlimit)})),
        keeps(sys(SYS_getrusage, "getrusage", "dp", R::Emulate, {out_fixed(1, kRusage)})),
        keeps(sys(SYS_getrandom, "getrandom", "pux", R::Emulate, {out_ret(0)})),
        sys(SYS_sethostname, "sethostname", "pu", R::Emulate, {in_arg(0, 1)}),
        sys(SYS_setdomainname, "setdomainname", "pu", R::Emulate, {in_arg(0, 1)}),
    };
    return t;
}

SubcommandInfo sub(int nr, uint64_t value, std::string_view name, std::initializer_list<rw_buf_spec> bufs = {},
                   FdEffect effect = FdEffect::None)
{
    return SubcommandInfo{nr, value, name, spec(bufs), effect};
}

SubcommandInfo keeps(SubcommandInfo info)
{
    info.blocking = Blocking::Never;
    return info;
}

// Refused for the reason `inspect` finds in input buffer `buffer`, if any.
SubcommandInfo inspected(int buffer, std::string_view (*inspect)(std::span<const uint8_t>), SubcommandInfo info)
{
    info.inspected = static_cast<int8_t>(buffer);
    info.inspect = inspect;
    return info;
}

// bpf(cmd, attr, size): the union bpf_attr, of which the kernel reads
// `size` bytes (and takes the rest as zeros: fields past it are absent).
constexpr rw_buf_spec bpf_attr()
{
    return in_arg(1, 2);
}
// A buffer a field of the attr points to, at `off`.
constexpr rw_buf_spec bpf_pointed(uint16_t off, rw_buf_spec b)
{
    return within(2, via(off, b));
}
// A field of the attr the kernel writes back, at `off`.
constexpr rw_buf_spec bpf_written(uint16_t off, uint32_t size)
{
    return within(2, at(off, out_fixed(1, size)));
}
// A map's key or value, sized by the map whose descriptor is the attr's
// first u32.
constexpr rw_buf_spec bpf_map_data(uint8_t dir, uint16_t off, rw_state which)
{
    return bpf_pointed(off, state_sized(dir, 1, which, 1, 0));
}
// The log a verifier writes (also when it refuses): the buffer at
// `ptr_off`, of the size at `size_off`.
constexpr rw_buf_spec bpf_log(uint16_t ptr_off, uint16_t size_off)
{
    rw_buf_spec b = buf(RW_SZ_FIELD, 1, 1, kOut, 0);
    b.size_off = size_off;
    return bpf_pointed(ptr_off, b);
}

// A BPF program's instructions: whether it calls bpf_probe_write_user,
// which writes into the memory of whatever process runs when the program
// does, at no syscall of that process's.
std::string_view bpf_program_refusal(std::span<const uint8_t> insns)
{
    constexpr uint8_t kCall = 0x85; // BPF_JMP | BPF_CALL
    constexpr int32_t kProbeWriteUser = 36;
    for (size_t at = 0; at + 8 <= insns.size(); at += 8) {
        int32_t imm;
        std::memcpy(&imm, insns.data() + at + 4, sizeof imm);
        // src_reg 0: a helper, by number (1 is another BPF function, 2 a kfunc).
        if (insns[at] == kCall && (insns[at + 1] >> 4) == 0 && imm == kProbeWriteUser)
            return "the program it loads calls bpf_probe_write_user, which writes into the memory of the process "
                   "it runs in outside any of its syscalls";
    }
    return {};
}

std::vector<SubcommandInfo> bpf_commands()
{
    constexpr int nr = SYS_bpf;
    // union bpf_attr's layouts (uapi/linux/bpf.h), by command.
    return {
        sub(nr, 0, "BPF_MAP_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 1, "BPF_MAP_LOOKUP_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 2, "BPF_MAP_UPDATE_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kIn, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 3, "BPF_MAP_DELETE_ELEM", {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY)}),
        // The key is absent for the first key.
        sub(nr, 4, "BPF_MAP_GET_NEXT_KEY",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_KEY)}),
        // The instructions (insn_cnt at 4, 8 bytes each, at 8) are kept whole:
        // `rewind info` looks in them for what replay cannot reproduce. The
        // license at 16, the log at 32 (log_size at 28), log_true_size at 140.
        inspected(1, bpf_program_refusal,
                  sub(nr, 5, "BPF_PROG_LOAD",
                      {bpf_attr(), kept(bpf_pointed(8, in_field_sized(1, 1, 4, 8))), bpf_pointed(16, in_str(1)),
                       bpf_log(32, 28), within(2, at(140, out_fixed_always(1, 4)))},
                      kNewFd)),
        sub(nr, 6, "BPF_OBJ_PIN", {bpf_attr(), bpf_pointed(0, in_str(1))}),
        sub(nr, 7, "BPF_OBJ_GET", {bpf_attr(), bpf_pointed(0, in_str(1))}, kNewFd),
        sub(nr, 8, "BPF_PROG_ATTACH", {bpf_attr()}),
        sub(nr, 9, "BPF_PROG_DETACH", {bpf_attr()}),
        // retval, data_size_out at 4..16, duration, ctx_size_out at 36..48;
        // data_out at 24 (data_size_out at 12), ctx_out at 56 (ctx_size_out
        // at 44).
        sub(nr, 10, "BPF_PROG_TEST_RUN",
            {bpf_attr(), bpf_written(4, 12), bpf_written(36, 12), bpf_pointed(24, out_field_sized(1, 1, 12)),
             bpf_pointed(56, out_field_sized(1, 1, 44))}),
        sub(nr, 11, "BPF_PROG_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 12, "BPF_MAP_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 13, "BPF_PROG_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 14, "BPF_MAP_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        // info_len at 4 (read, written back with what was written), the
        // info at 8.
        sub(nr, 15, "BPF_OBJ_GET_INFO_BY_FD",
            {bpf_attr(), bpf_written(4, 4), bpf_pointed(8, out_field_sized(1, 1, 4))}),
        // attach_flags .. revision (12..64) written back; four arrays of
        // prog_cnt (at 24) u32s.
        sub(nr, 16, "BPF_PROG_QUERY",
            {bpf_attr(), bpf_written(12, 52), bpf_pointed(16, out_field_sized(1, 1, 24, 4)),
             bpf_pointed(32, out_field_sized(1, 1, 24, 4)), bpf_pointed(40, out_field_sized(1, 1, 24, 4)),
             bpf_pointed(48, out_field_sized(1, 1, 24, 4))}),
        sub(nr, 17, "BPF_RAW_TRACEPOINT_OPEN", {bpf_attr(), bpf_pointed(0, in_str(1))}, kNewFd),
        // The BTF at 0 (btf_size at 16), its log at 8 (btf_log_size at 20),
        // btf_log_true_size at 28.
        sub(nr, 18, "BPF_BTF_LOAD",
            {bpf_attr(), bpf_pointed(0, in_field_sized(1, 1, 16)), bpf_log(8, 20),
             within(2, at(28, out_fixed_always(1, 4)))},
            kNewFd),
        sub(nr, 19, "BPF_BTF_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 21, "BPF_MAP_LOOKUP_AND_DELETE_ELEM",
            {bpf_attr(), bpf_map_data(kIn, 8, RW_STATE_BPF_KEY), bpf_map_data(kOut, 16, RW_STATE_BPF_VALUE)}),
        sub(nr, 22, "BPF_MAP_FREEZE", {bpf_attr()}),
        sub(nr, 23, "BPF_BTF_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 28, "BPF_LINK_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 29, "BPF_LINK_UPDATE", {bpf_attr()}),
        sub(nr, 30, "BPF_LINK_GET_FD_BY_ID", {bpf_attr()}, kNewFd),
        sub(nr, 31, "BPF_LINK_GET_NEXT_ID", {bpf_attr(), bpf_written(4, 4)}),
        sub(nr, 32, "BPF_ENABLE_STATS", {bpf_attr()}, kNewFd),
        sub(nr, 33, "BPF_ITER_CREATE", {bpf_attr()}, kNewFd),
        sub(nr, 34, "BPF_LINK_DETACH", {bpf_attr()}),
        sub(nr, 35, "BPF_PROG_BIND_MAP", {bpf_attr()}),
        sub(nr, 36, "BPF_TOKEN_CREATE", {bpf_attr()}, kNewFd),
    };
}

// Subcommands, but bpf's (below).
std::vector<SubcommandInfo> listed_subcommands()
{
    return {
        // Terminal ioctls predate the size encoding in the request number.
        sub(SYS_ioctl, 0x5401, "TCGETS", {out_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5402, "TCSETS", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5403, "TCSETSW", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5404, "TCSETSF", {in_fixed(2, kTermios)}),
        sub(SYS_ioctl, 0x5409, "TCSBRK"),
        sub(SYS_ioctl, 0x540A, "TCXONC"),
        sub(SYS_ioctl, 0x540B, "TCFLSH"),
        sub(SYS_ioctl, 0x540E, "TIOCSCTTY"),
        sub(SYS_ioctl, 0x540F, "TIOCGPGRP", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5410, "TIOCSPGRP", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5411, "TIOCOUTQ", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5413, "TIOCGWINSZ", {out_fixed(2, kWinsize)}),
        sub(SYS_ioctl, 0x5414, "TIOCSWINSZ", {in_fixed(2, kWinsize)}),
        sub(SYS_ioctl, 0x541B, "FIONREAD", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5421, "FIONBIO", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5422, "TIOCNOTTY"),
        sub(SYS_ioctl, 0x5429, "TIOCGSID", {out_fixed(2, 4)}),
        sub(SYS_ioctl, 0x5450, "FIONCLEX"),
        sub(SYS_ioctl, 0x5451, "FIOCLEX"),
        sub(SYS_ioctl, 0x5452, "FIOASYNC", {in_fixed(2, 4)}),
        sub(SYS_ioctl, 0x8910, "SIOCGIFNAME", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8912, "SIOCGIFCONF", {out_fixed(2, 16)}),
        sub(SYS_ioctl, 0x8913, "SIOCGIFFLAGS", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8915, "SIOCGIFADDR", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8921, "SIOCGIFMTU", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8927, "SIOCGIFHWADDR", {out_fixed(2, kIfreq)}),
        sub(SYS_ioctl, 0x8933, "SIOCGIFINDEX", {out_fixed(2, kIfreq)}),

        // perf events (linux/perf_event.h). Several pass a value where they
        // declare a pointer.
        sub(SYS_ioctl, 0x2400, "PERF_EVENT_IOC_ENABLE"),
        sub(SYS_ioctl, 0x2401, "PERF_EVENT_IOC_DISABLE"),
        sub(SYS_ioctl, 0x2402, "PERF_EVENT_IOC_REFRESH"),
        sub(SYS_ioctl, 0x2403, "PERF_EVENT_IOC_RESET"),
        sub(SYS_ioctl, 0x40082404, "PERF_EVENT_IOC_PERIOD", {in_fixed(2, 8)}),
        sub(SYS_ioctl, 0x2405, "PERF_EVENT_IOC_SET_OUTPUT"),
        sub(SYS_ioctl, 0x40082406, "PERF_EVENT_IOC_SET_FILTER", {in_str(2)}),
        sub(SYS_ioctl, 0x80082407, "PERF_EVENT_IOC_ID", {out_fixed(2, 8)}),
        sub(SYS_ioctl, 0x40042408, "PERF_EVENT_IOC_SET_BPF"),
        sub(SYS_ioctl, 0x40042409, "PERF_EVENT_IOC_PAUSE_OUTPUT"),
        // struct perf_event_query_bpf: ids_len (read), prog_cnt (written),
        // then the ids.
        sub(SYS_ioctl, 0xC008240A, "PERF_EVENT_IOC_QUERY_BPF",
            {in_fixed(2, 4), at(4, out_fixed(2, 4)), at(8, out_field_sized(2, 2, 4, 4))}),
        sub(SYS_ioctl, 0x4008240B, "PERF_EVENT_IOC_MODIFY_ATTRIBUTES",
            {in_fixed(2, kPerfAttrVer0), capped(kPageSize, in_field_sized(2, 2, 4))}),

        sub(SYS_fcntl, 0, "F_DUPFD", {}, FdEffect::Dup),
        sub(SYS_fcntl, 1, "F_GETFD"),
        sub(SYS_fcntl, 2, "F_SETFD"),
        sub(SYS_fcntl, 3, "F_GETFL"),
        sub(SYS_fcntl, 4, "F_SETFL"),
        sub(SYS_fcntl, 5, "F_GETLK", {out_fixed(2, kFlock)}),
        sub(SYS_fcntl, 6, "F_SETLK", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 7, "F_SETLKW", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 8, "F_SETOWN"),
        sub(SYS_fcntl, 9, "F_GETOWN"),
        sub(SYS_fcntl, 10, "F_SETSIG"),
        sub(SYS_fcntl, 11, "F_GETSIG"),
        sub(SYS_fcntl, 15, "F_SETOWN_EX", {in_fixed(2, 8)}),
        sub(SYS_fcntl, 16, "F_GETOWN_EX", {out_fixed(2, 8)}),
        sub(SYS_fcntl, 36, "F_OFD_GETLK", {out_fixed(2, kFlock)}),
        sub(SYS_fcntl, 37, "F_OFD_SETLK", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 38, "F_OFD_SETLKW", {in_fixed(2, kFlock)}),
        sub(SYS_fcntl, 1024, "F_SETLEASE"),
        sub(SYS_fcntl, 1025, "F_GETLEASE"),
        sub(SYS_fcntl, 1026, "F_NOTIFY"),
        sub(SYS_fcntl, 1030, "F_DUPFD_CLOEXEC", {}, FdEffect::Dup),
        sub(SYS_fcntl, 1031, "F_SETPIPE_SZ"),
        sub(SYS_fcntl, 1032, "F_GETPIPE_SZ"),
        sub(SYS_fcntl, 1033, "F_ADD_SEALS"),
        sub(SYS_fcntl, 1034, "F_GET_SEALS"),

        sub(SYS_arch_prctl, 0x1001, "ARCH_SET_GS"),
        sub(SYS_arch_prctl, 0x1002, "ARCH_SET_FS"),
        sub(SYS_arch_prctl, 0x1003, "ARCH_GET_FS", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1004, "ARCH_GET_GS", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1011, "ARCH_GET_CPUID"),
        sub(SYS_arch_prctl, 0x1012, "ARCH_SET_CPUID"),
        sub(SYS_arch_prctl, 0x1021, "ARCH_GET_XCOMP_SUPP", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1022, "ARCH_GET_XCOMP_PERM", {out_fixed(1, 8)}),
        sub(SYS_arch_prctl, 0x1023, "ARCH_REQ_XCOMP_PERM"),
        sub(SYS_arch_prctl, 0x3001, "ARCH_CET_STATUS", {out_fixed(1, 24)}),
        sub(SYS_arch_prctl, 0x5001, "ARCH_SHSTK_ENABLE"),
        sub(SYS_arch_prctl, 0x5002, "ARCH_SHSTK_DISABLE"),
        sub(SYS_arch_prctl, 0x5003, "ARCH_SHSTK_LOCK"),
        sub(SYS_arch_prctl, 0x5005, "ARCH_SHSTK_STATUS", {out_fixed(1, 8)}),

        sub(SYS_prctl, 1, "PR_SET_PDEATHSIG"),
        sub(SYS_prctl, 2, "PR_GET_PDEATHSIG", {out_fixed(1, 4)}),
        sub(SYS_prctl, 3, "PR_GET_DUMPABLE"),
        sub(SYS_prctl, 4, "PR_SET_DUMPABLE"),
        sub(SYS_prctl, 7, "PR_GET_KEEPCAPS"),
        sub(SYS_prctl, 8, "PR_SET_KEEPCAPS"),
        sub(SYS_prctl, 15, "PR_SET_NAME", {in_fixed(1, 16)}),
        sub(SYS_prctl, 16, "PR_GET_NAME", {out_fixed(1, 16)}),
        sub(SYS_prctl, 21, "PR_GET_SECCOMP"),
        sub(SYS_prctl, 22, "PR_SET_SECCOMP"),
        sub(SYS_prctl, 23, "PR_CAPBSET_READ"),
        sub(SYS_prctl, 24, "PR_CAPBSET_DROP"),
        sub(SYS_prctl, 25, "PR_GET_TSC", {out_fixed(1, 4)}),
        sub(SYS_prctl, 27, "PR_GET_SECUREBITS"),
        sub(SYS_prctl, 28, "PR_SET_SECUREBITS"),
        sub(SYS_prctl, 29, "PR_SET_TIMERSLACK"),
        sub(SYS_prctl, 30, "PR_GET_TIMERSLACK"),
        sub(SYS_prctl, 33, "PR_MCE_KILL"),
        sub(SYS_prctl, 36, "PR_SET_CHILD_SUBREAPER"),
        sub(SYS_prctl, 37, "PR_GET_CHILD_SUBREAPER", {out_fixed(1, 4)}),
        sub(SYS_prctl, 38, "PR_SET_NO_NEW_PRIVS"),
        sub(SYS_prctl, 39, "PR_GET_NO_NEW_PRIVS"),
        sub(SYS_prctl, 40, "PR_GET_TID_ADDRESS", {out_fixed(1, 8)}),
        sub(SYS_prctl, 41, "PR_SET_THP_DISABLE"),
        sub(SYS_prctl, 42, "PR_GET_THP_DISABLE"),
        sub(SYS_prctl, 47, "PR_CAP_AMBIENT"),
        sub(SYS_prctl, 0x53564d41, "PR_SET_VMA", {in_str(4)}),
        sub(SYS_prctl, 0x59616d61, "PR_SET_PTRACER"),

        // futex operations (the low 7 bits; private and clock flags masked).
        sub(SYS_futex, 0, "FUTEX_WAIT", {in_fixed(3, kTimespec)}),
        keeps(sub(SYS_futex, 1, "FUTEX_WAKE")),
        sub(SYS_futex, 2, "FUTEX_FD"),
        keeps(sub(SYS_futex, 3, "FUTEX_REQUEUE")),
        keeps(sub(SYS_futex, 4, "FUTEX_CMP_REQUEUE")),
        keeps(sub(SYS_futex, 5, "FUTEX_WAKE_OP", {out_fixed_always(4, 4)})),
        sub(SYS_futex, 6, "FUTEX_LOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 7, "FUTEX_UNLOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 8, "FUTEX_TRYLOCK_PI", {out_fixed_always(0, 4)}),
        sub(SYS_futex, 9, "FUTEX_WAIT_BITSET", {in_fixed(3, kTimespec)}),
        keeps(sub(SYS_futex, 10, "FUTEX_WAKE_BITSET")),
        sub(SYS_futex, 11, "FUTEX_WAIT_REQUEUE_PI", {out_fixed_always(0, 4), out_fixed_always(4, 4)}),
        sub(SYS_futex, 12, "FUTEX_CMP_REQUEUE_PI", {out_fixed_always(4, 4)}),
        sub(SYS_futex, 13, "FUTEX_LOCK_PI2", {out_fixed_always(0, 4)}),

        sub(SYS_shmctl, 0, "IPC_RMID"),
        sub(SYS_shmctl, 1, "IPC_SET", {in_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 2, "IPC_STAT", {out_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 3, "IPC_INFO", {out_fixed(2, kShminfo)}),
        sub(SYS_shmctl, 11, "SHM_LOCK"),
        sub(SYS_shmctl, 12, "SHM_UNLOCK"),
        sub(SYS_shmctl, 13, "SHM_STAT", {out_fixed(2, kShmidDs)}),
        sub(SYS_shmctl, 14, "SHM_INFO", {out_fixed(2, kShmInfo)}),
        sub(SYS_shmctl, 15, "SHM_STAT_ANY", {out_fixed(2, kShmidDs)}),

        sub(SYS_msgctl, 0, "IPC_RMID"),
        sub(SYS_msgctl, 1, "IPC_SET", {in_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 2, "IPC_STAT", {out_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 3, "IPC_INFO", {out_fixed(2, kMsginfo)}),
        sub(SYS_msgctl, 11, "MSG_STAT", {out_fixed(2, kMsqidDs)}),
        sub(SYS_msgctl, 12, "MSG_INFO", {out_fixed(2, kMsginfo)}),
        sub(SYS_msgctl, 13, "MSG_STAT_ANY", {out_fixed(2, kMsqidDs)}),

        // semctl's fourth argument is a union: a value, or a pointer.
        sub(SYS_semctl, 0, "IPC_RMID"),
        sub(SYS_semctl, 1, "IPC_SET", {in_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 2, "IPC_STAT", {out_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 3, "IPC_INFO", {out_fixed(3, kSeminfo)}),
        sub(SYS_semctl, 11, "GETPID"),
        sub(SYS_semctl, 12, "GETVAL"),
        // A u16 per semaphore of the set, a number the call does not carry.
        sub(SYS_semctl, 13, "GETALL", {state_sized(kOut, 3, RW_STATE_SEM_NSEMS, 0)}),
        sub(SYS_semctl, 14, "GETNCNT"),
        sub(SYS_semctl, 15, "GETZCNT"),
        sub(SYS_semctl, 16, "SETVAL"),
        sub(SYS_semctl, 17, "SETALL", {state_sized(kIn, 3, RW_STATE_SEM_NSEMS, 0)}),
        sub(SYS_semctl, 18, "SEM_STAT", {out_fixed(3, kSemidDs)}),
        sub(SYS_semctl, 19, "SEM_INFO", {out_fixed(3, kSeminfo)}),
        sub(SYS_semctl, 20, "SEM_STAT_ANY", {out_fixed(3, kSemidDs)}),
    };
}

const std::vector<SubcommandInfo>& subcommand_table()
{
    static const std::vector<SubcommandInfo> t = [] {
        std::vector<SubcommandInfo> all = listed_subcommands();
        auto bpf = bpf_commands();
        all.insert(all.end(), bpf.begin(), bpf.end());
        return all;
    }();
    return t;
}

// Names of every x86-64 syscall, generated from the kernel headers.
struct NameEntry {
    int nr;
    const char* name;
};
constexpr NameEntry kGeneratedNames[] = {
#include "syscall_names.inc"
};
// Newer than the build host's headers.
constexpr NameEntry kRecentNames[] = {
    {451, "cachestat"},         {452, "fchmodat2"},         {453, "map_shadow_stack"}, {454, "futex_wake"},
    {455, "futex_wait"},        {456, "futex_requeue"},     {457, "statmount"},        {458, "listmount"},
    {459, "lsm_get_self_attr"}, {460, "lsm_set_self_attr"}, {461, "lsm_list_modules"}, {462, "mseal"},
    {463, "setxattrat"},        {464, "getxattrat"},        {465, "listxattrat"},      {466, "removexattrat"},
    {467, "open_tree_attr"},
};

struct Index {
    std::array<const SyscallInfo*, RW_MAX_SYSCALL_NR> by_nr{};
    std::unordered_map<uint64_t, const SubcommandInfo*> subcommands;
    std::array<std::string_view, RW_MAX_SYSCALL_NR> names{};

    Index()
    {
        for (const auto& e : kGeneratedNames)
            if (e.nr >= 0 && e.nr < RW_MAX_SYSCALL_NR)
                names[e.nr] = e.name;
        for (const auto& e : kRecentNames)
            if (names[e.nr].empty())
                names[e.nr] = e.name;
        for (const auto& s : table()) {
            by_nr.at(s.nr) = &s;
            names[s.nr] = s.name;
        }
        for (const auto& s : subcommand_table())
            subcommands.emplace(key(s.nr, s.value), &s);
    }
    static uint64_t key(int nr, uint64_t value) { return (uint64_t(nr) << 48) ^ value; }
};

const Index& index()
{
    static const Index idx;
    return idx;
}

} // namespace

std::string_view to_string(ReplayAction action)
{
    switch (action) {
    case ReplayAction::Emulate:
        return "emulate";
    case ReplayAction::ExecuteCheck:
        return "execute+check";
    case ReplayAction::ExecuteRestore:
        return "execute+restore";
    case ReplayAction::Mmap:
        return "mmap";
    case ReplayAction::Clone:
        return "clone";
    case ReplayAction::Exec:
        return "exec";
    case ReplayAction::Exit:
        return "exit";
    case ReplayAction::Sigreturn:
        return "sigreturn";
    case ReplayAction::Refuse:
        return "refuse";
    }
    return "?";
}

std::span<const SyscallInfo> all_syscalls()
{
    return table();
}
std::span<const SubcommandInfo> all_subcommands()
{
    return subcommand_table();
}

const SyscallInfo* find_syscall(int nr)
{
    if (nr < 0 || nr >= RW_MAX_SYSCALL_NR)
        return nullptr;
    return index().by_nr[nr];
}

const SubcommandInfo* find_subcommand(int nr, uint64_t value)
{
    const auto& subs = index().subcommands;
    auto it = subs.find(Index::key(nr, value));
    return it == subs.end() || it->second->nr != nr || it->second->value != value ? nullptr : it->second;
}

std::string syscall_name(int nr)
{
    if (nr >= 0 && nr < RW_MAX_SYSCALL_NR && !index().names[nr].empty())
        return std::string(index().names[nr]);
    return "syscall_" + std::to_string(nr);
}

int syscall_number(std::string_view name)
{
    const auto& names = index().names;
    auto it = std::find(names.begin(), names.end(), name);
    return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

FdEffect fd_effect(int nr, const uint64_t (&args)[RW_MAX_ARGS])
{
    ResolvedSpec r = resolve_spec(nr, args);
    if (r.subcommand)
        return r.subcommand->fd_effect;
    const SyscallInfo* info = find_syscall(nr);
    return info ? info->fd_effect : FdEffect::None;
}

ReplayAction replay_action(const SyscallInfo& info, const uint64_t (&args)[RW_MAX_ARGS])
{
    constexpr uint64_t kMadvDontfork = 10, kMadvWipeonfork = 18;
    if (info.nr == SYS_madvise && (args[2] == kMadvDontfork || args[2] == kMadvWipeonfork))
        return ReplayAction::Emulate;
    if (is_query(info, args))
        return ReplayAction::Emulate;
    return info.replay;
}

std::string refusal_reason(const SyscallInfo& info)
{
    std::string_view why = info.refusal.empty() ? "its effects reach outside the recording" : info.refusal;
    return std::string(info.name) + " cannot be replayed: " + std::string(why);
}

Blocking blocking(int nr, const uint64_t (&args)[RW_MAX_ARGS])
{
    const SyscallInfo* info = find_syscall(nr);
    if (!info)
        return Blocking::May;
    // A syscall that never blocks decides for all its subcommands (prctl).
    if (info->blocking == Blocking::Never || !(info->spec.flags & RW_SYS_DISPATCH))
        return info->blocking;
    ResolvedSpec r = resolve_spec(nr, args);
    return r.subcommand ? r.subcommand->blocking : info->blocking;
}

namespace {

rw_sys_spec with_blocking(rw_sys_spec spec, Blocking blocking)
{
    if (blocking == Blocking::May)
        spec.flags |= RW_SYS_MAY_BLOCK;
    else if (blocking == Blocking::OnDescriptor)
        spec.flags |= RW_SYS_BLOCKS_ON_FD;
    return spec;
}

} // namespace

rw_sys_spec kernel_spec(const SyscallInfo& info)
{
    return with_blocking(info.spec, info.blocking);
}

rw_sys_spec kernel_spec(const SubcommandInfo& info)
{
    const SyscallInfo* parent = find_syscall(info.nr);
    bool never = parent && parent->blocking == Blocking::Never;
    return with_blocking(info.spec, never ? Blocking::Never : info.blocking);
}

ResolvedSpec resolve_spec(int nr, const uint64_t (&args)[RW_MAX_ARGS])
{
    ResolvedSpec r;
    const SyscallInfo* info = find_syscall(nr);
    if (!info)
        return r;
    r.spec = info->spec;
    r.known = true;
    if (!(info->spec.flags & RW_SYS_DISPATCH))
        return r;
    uint64_t value = args[info->spec.dispatch_arg < RW_MAX_ARGS ? info->spec.dispatch_arg : 0];
    if (info->spec.dispatch_mask_bits)
        value &= (uint64_t(1) << info->spec.dispatch_mask_bits) - 1;
    if (const SubcommandInfo* s = find_subcommand(nr, value)) {
        r.spec = s->spec;
        r.subcommand = s;
        return r;
    }
    if (info->spec.nbufs && info->spec.bufs[0].kind == RW_SZ_IOCTL && RW_IOC_DIR(value))
        return r;
    r.spec = rw_sys_spec{};
    r.known = false;
    return r;
}

} // namespace rw
