// The syscall table itself. Sizes are x86-64 kernel layouts.
#include "syscall_table.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>
#include <unordered_map>
#include <vector>

#include "syscall_subcommands.h"
#include "table_builders.h"

namespace rw {
namespace {

using namespace table_builders;
using detail::subcommand_table;

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
        opens_file(with(kNewFd, sys(SYS_open, "open", "sxo", R::Emulate, {in_str(0)}))),
        opens_file(with(kNewFd, sys(SYS_openat, "openat", "fsxo", R::Emulate, {in_str(1)}))),
        opens_file(with(kNewFd, sys(SYS_openat2, "openat2", "fspu", R::Emulate, {in_str(1), in_arg(2, 3)}))),
        opens_file(with(kNewFd, sys(SYS_creat, "creat", "so", R::Emulate, {in_str(0)}))),
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
        // The mount API: descriptors for a file system being set up, a
        // mount, a tree; what they change is the mount namespace, which
        // replay reads through the calls' recorded results like any path.
        with(kNewFd, sys(SYS_fsopen, "fsopen", "sx", R::Emulate, {in_str(0)})),
        sys(SYS_fsconfig, "fsconfig", "fdspd", R::Emulate, {in_str(2)}),
        with(kNewFd, sys(SYS_fsmount, "fsmount", "fxx", R::Emulate)),
        with(kNewFd, sys(SYS_fspick, "fspick", "fsx", R::Emulate, {in_str(1)})),
        sys(SYS_move_mount, "move_mount", "fsfsx", R::Emulate, {in_str(1), in_str(3)}),
        with(kNewFd, sys(SYS_open_tree, "open_tree", "fsx", R::Emulate, {in_str(1)})),
        sys(SYS_mount_setattr, "mount_setattr", "fsxpu", R::Emulate, {in_str(1), in_arg(3, 4)}),
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
        // IPT_SO_SET_REPLACE and IP6T_SO_SET_REPLACE (optname 64 at SOL_IP,
        // SOL_IPV6) write the replaced table's counters (num_counters, the
        // u32 at 84, of 16 bytes each) where the struct's pointer at 88 says.
        // No other option 64 takes a struct that long (within optlen).
        sys(SYS_setsockopt, "setsockopt", "fddpu", R::Emulate,
            {in_arg(3, 4), within(4, when_equals(2, 64, via(88, out_field_sized(3, 3, 84, 16))))}),
        sys(SYS_sendto, "sendto", "fpuxpu", R::Emulate, {in_ret(1), in_arg(4, 5)}, 0),
        sys(SYS_recvfrom, "recvfrom", "fpuxpp", R::Emulate, {out_ret(1), out_socklen(4, 5), out_fixed(5, 4)}),
        sys(SYS_sendmsg, "sendmsg", "fpx", R::Emulate, {in_msghdr(1)}, 0),
        sys(SYS_recvmsg, "recvmsg", "fpx", R::Emulate, {out_msghdr(1)}),
        // Each message's msg_len is written back: the bytes sent of it.
        sys(SYS_sendmmsg, "sendmmsg", "fpux", R::Emulate, {in_mmsghdr(1), buf(RW_SZ_MMSG_LEN, 1, 0, kOut | kOk, 0)}),
        sys(SYS_recvmmsg, "recvmmsg", "fpuxp", R::Emulate, {out_mmsghdr(1), out_fixed(4, kTimespec)}),
        sys(SYS_shutdown, "shutdown", "fd", R::Emulate),

        // ---- memory ---------------------------------------------------------
        keeps(shares_memory(sys_spec(SYS_mmap, "mmap", "pupxfl", R::Mmap, spec({}, RW_SYS_MAPS_FILE)))),
        keeps(sys(SYS_munmap, "munmap", "pu", R::ExecuteCheck)),
        keeps(sys(SYS_mprotect, "mprotect", "pux", R::ExecuteCheck)),
        keeps(sys(SYS_mremap, "mremap", "puuxp", R::ExecuteCheck)),
        keeps(sys(SYS_madvise, "madvise", "pud", R::ExecuteCheck)),
        // A byte per page: whether it is resident.
        keeps(sys(SYS_mincore, "mincore", "pup", R::Emulate, {buf(RW_SZ_PAGES, 2, 1, kOut | kOk, 0)})),
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
        writes_process(
            sys(SYS_process_vm_writev, "process_vm_writev", "dpupux", R::Emulate, {in_iovec(1, 2), out_iovec(3, 4)})),
        // The segment's id is served from the log; attaching it is refused.
        sys(SYS_shmget, "shmget", "xux", R::Emulate),
        shares_memory(sys(SYS_shmat, "shmat", "dpx", R::AttachSegment)),
        sys(SYS_shmdt, "shmdt", "p", R::ExecuteCheck),
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
        answered_by_recorder(sys(SYS_wait4, "wait4", "dpxp", R::Emulate, {out_fixed(1, 4), out_fixed(3, kRusage)})),
        answered_by_recorder(
            sys(SYS_waitid, "waitid", "ddpxp", R::Emulate, {out_fixed(2, kSiginfo), out_fixed(4, kRusage)})),
        keeps(sys(SYS_set_tid_address, "set_tid_address", "p", R::ExecuteRestore)),
        keeps(sys(SYS_set_robust_list, "set_robust_list", "pu", R::ExecuteCheck)),
        keeps(sys(SYS_get_robust_list, "get_robust_list", "dpp", R::Emulate, {out_fixed(1, 8), out_fixed(2, 8)})),
        keeps(refused_registration(sys(SYS_rseq, "rseq", "puxx", R::Emulate))),
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
        sys_spec(SYS_seccomp, "seccomp", "xxp", R::Emulate, dispatch(0)),
        sys(SYS_getpriority, "getpriority", "dd", R::Emulate),
        sys(SYS_ioprio_get, "ioprio_get", "dd", R::Emulate),
        sys(SYS_ioprio_set, "ioprio_set", "ddd", R::Emulate),
        sys(SYS_syslog, "syslog", "dpd", R::Emulate, {out_ret(1)}),
        sys(SYS_acct, "acct", "s", R::Emulate, {in_str(0)}),
        with(kNewFd, sys(SYS_fanotify_init, "fanotify_init", "xx", R::Emulate)),
        sys(SYS_fanotify_mark, "fanotify_mark", "fxxfs", R::Emulate, {in_str(4)}),
        sys(SYS_setpriority, "setpriority", "ddd", R::Emulate),
        // A recorded tracer's requests are answered by the recorder, which
        // records their outputs (supervisor_tracing.cpp).
        answered_by_recorder(sys(SYS_ptrace, "ptrace", "ddpp", R::Emulate)),
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
        query_when_null(1, keeps_signal_mask(keeps(sys(SYS_rt_sigprocmask, "rt_sigprocmask", "dppu", R::ExecuteCheck,
                                                       {in_arg(1, 3), out_arg(2, 3)})))),
        keeps_signal_mask(sys(SYS_rt_sigreturn, "rt_sigreturn", "", R::Sigreturn)),
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
        // A process's own stack and data limits are set in replay too (replay_action).
        sys(SYS_setrlimit, "setrlimit", "dp", R::ExecuteRestore, {in_fixed(1, kRlimit)}),
        keeps(
            sys(SYS_prlimit64, "prlimit64", "ddpp", R::ExecuteRestore, {in_fixed(2, kRlimit), out_fixed(3, kRlimit)})),
        keeps(sys(SYS_getrusage, "getrusage", "dp", R::Emulate, {out_fixed(1, kRusage)})),
        keeps(sys(SYS_getrandom, "getrandom", "pux", R::Emulate, {out_ret(0)})),
        sys(SYS_sethostname, "sethostname", "pu", R::Emulate, {in_arg(0, 1)}),
        keeps(sys_spec(SYS_sysfs, "sysfs", "dxx", R::Emulate, dispatch(0))),
        sys(SYS_vhangup, "vhangup", "", R::Emulate),
        sys(SYS_setdomainname, "setdomainname", "pu", R::Emulate, {in_arg(0, 1)}),

        // ---- keys and Landlock: state kept in the kernel, served from the log --
        sys(SYS_add_key, "add_key", "sspud", R::Emulate, {in_str(0), in_str(1), in_arg(2, 3)}),
        sys(SYS_request_key, "request_key", "sssd", R::Emulate, {in_str(0), in_str(1), in_str(2)}),
        sys_spec(SYS_keyctl, "keyctl", "dxxxx", R::Emulate, dispatch(0)),
        // The ruleset's attributes are as large as the program says; a
        // rule's, by its type. Replay's processes are not restricted: their
        // file accesses are served from the log.
        with(kNewFd, sys(SYS_landlock_create_ruleset, "landlock_create_ruleset", "pux", R::Emulate, {in_arg(0, 1)})),
        sys(SYS_landlock_add_rule, "landlock_add_rule", "fdpx", R::Emulate, {in_fixed(2, kLandlockRuleAttr)}),
        sys(SYS_landlock_restrict_self, "landlock_restrict_self", "fx", R::Emulate),
    };
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
    case ReplayAction::AttachSegment:
        return "attach-segment";
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
    // A stack or data size limit a process sets for itself decides where
    // its stack stops growing (a stack overflow's depth), where brk, which
    // replay runs for real, stops, and, across exec, where the kernel lays
    // out mappings: replay sets them too. Other limits are served from the
    // log: a CPU time limit would end a replay that runs slower than the
    // recording did, and another process is named by its recorded id.
    auto memory_limit = [](uint64_t resource) { return resource == RLIMIT_STACK || resource == RLIMIT_DATA; };
    if (info.nr == SYS_setrlimit && !memory_limit(args[0]))
        return ReplayAction::Emulate;
    if (info.nr == SYS_prlimit64 && (args[0] != 0 || !memory_limit(args[1]) || args[2] == 0))
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
