// The vocabulary the syscall table is written in: how a buffer is found
// and sized (rw_buf_spec, bpf/rewind_abi.h), how an entry is built, and
// the kernel structures' sizes. Only the table's own files include it.
#pragma once

#include <sys/syscall.h>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "syscall_table.h"

namespace rw::table_builders {

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

// The buffer is there only when args[arg] is `value` (a sub-operation).
constexpr rw_buf_spec when_equals(int arg, uint32_t value, rw_buf_spec b)
{
    b.when_arg = static_cast<uint8_t>(arg);
    b.when_how = RW_WHEN_EQUALS;
    b.when_bits = value;
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

inline SyscallInfo sys(int nr, std::string_view name, std::string_view args, R replay,
                       std::initializer_list<rw_buf_spec> bufs = {}, int fd_arg = -1)
{
    return SyscallInfo{nr, name, args, replay, spec(bufs), static_cast<int8_t>(fd_arg)};
}

inline SyscallInfo sys_spec(int nr, std::string_view name, std::string_view args, R replay, rw_sys_spec s)
{
    return SyscallInfo{nr, name, args, replay, s, -1};
}

// Replay refuses a call that succeeded, for `why` (shown by `rewind info`).
inline SyscallInfo refused(std::string_view why, SyscallInfo info)
{
    info.refusal = why;
    return info;
}

inline SyscallInfo with(FdEffect effect, SyscallInfo info)
{
    info.fd_effect = effect;
    return info;
}

// The syscall never blocks: a thread of a serialized process runs through
// it without a stop (thread_scheduler.h).
inline SyscallInfo keeps(SyscallInfo info)
{
    info.blocking = Blocking::Never;
    return info;
}

// Blocks only on a descriptor that can block (a pipe, a socket, a
// terminal…); on a regular file it never waits for another thread.
inline SyscallInfo fd_io(SyscallInfo info)
{
    info.blocking = Blocking::OnDescriptor;
    return info;
}

// Reads a file into its first buffer, at args[offset_arg] or at the file
// position (RW_OFFSET_FILE_POS): recorded by reference where the trace holds
// the file (capture.bpf.c, read_by_reference).
inline SyscallInfo reads_file(SyscallInfo info, uint8_t offset_arg)
{
    info.spec.flags |= RW_SYS_READS_FILE;
    info.spec.offset_arg = offset_arg;
    return info;
}

// Writes or resizes args[0]'s file, at args[offset_arg], at the file
// position (RW_OFFSET_FILE_POS) or nowhere (RW_OFFSET_NONE: a new size):
// noted where a process has the file mapped (capture.bpf.c,
// note_mapped_write), for replay to change its copy as the kernel did.
inline SyscallInfo writes_file(SyscallInfo info, uint8_t offset_arg)
{
    info.spec.flags |= RW_SYS_WRITES_FILE;
    info.spec.offset_arg = offset_arg;
    return info;
}

// Returns a new descriptor for a file, maybe opened for writing: ends reads
// by reference of that file (capture_files.bpf.h, note_open).
inline SyscallInfo opens_file(SyscallInfo info)
{
    info.spec.flags |= RW_SYS_OPENS_FILE;
    return info;
}

// The supervisor may answer it itself (a recorded tracer's ptrace and
// waits, supervisor_tracer_calls.cpp): the kernel side stops it at its
// return when the supervisor asked, whatever it returned.
inline SyscallInfo answered_by_recorder(SyscallInfo info)
{
    info.spec.view = RW_VIEW_ANSWERED;
    return info;
}

// Writes into the memory of the process args[0] names, which may be
// another than the caller's: then the supervisor records where
// (process_memory_written), and its outputs are not the caller's memory.
inline SyscallInfo writes_process(SyscallInfo info)
{
    info.spec.view = RW_VIEW_WRITES_PROCESS;
    return info;
}

// Changes the thread's blocked signals: the kernel side keeps them after it
// (signal_masks), which the supervisor reads when the kernel unblocked one
// on its own (rdtsc's forced SIGSEGV).
inline SyscallInfo keeps_signal_mask(SyscallInfo info)
{
    info.spec.view = RW_VIEW_SIGNAL_MASK;
    return info;
}

// Makes memory its process may share with others (a System V attach, a
// MAP_SHARED mapping): the thread stops after it, for the supervisor to
// run the processes that share memory one at a time (memory_groups.h).
inline SyscallInfo shares_memory(SyscallInfo info)
{
    info.spec.view = RW_VIEW_SHARES_MEMORY;
    return info;
}

// rseq: the kernel would write the current CPU into the program's memory
// at every return to user mode, which replay cannot reproduce; a
// registration is refused (the recording filter, or RW_VIEW_RSEQ).
inline SyscallInfo refused_registration(SyscallInfo info)
{
    info.spec.view = RW_VIEW_RSEQ;
    return info;
}

// Only reads state when args[arg] is 0 (SyscallInfo::query_when_null).
inline SyscallInfo query_when_null(uint8_t arg, SyscallInfo info)
{
    info.query_when_null = static_cast<int8_t>(arg);
    return info;
}

constexpr FdEffect kNewFd = FdEffect::NewFd;

// Sizes of kernel structures on x86-64.
constexpr uint32_t kStat = 144, kStatx = 256, kStatfs = 120, kTimespec = 16, kTimeval = 16, kTimezone = 8,
                   kUtsname = 390, kSysinfo = 112, kRlimit = 16, kRusage = 144, kTms = 32, kKSigaction = 32,
                   kStackT = 24, kSiginfo = 128, kItimer = 32, kFlock = 32, kEpollEvent = 12, kTermios = 36,
                   kWinsize = 8, kIfreq = 40, kRtentry = 120, kLandlockRuleAttr = 16, kKeyctlKdfParams = 56,
                   kSigevent = 64, kCapData = 24, kShmidDs = 112;
// perf_event_attr's first version, which the kernel reads at least; a page.
constexpr uint32_t kPerfAttrVer0 = 64, kPageSize = 4096;
// System V IPC (the 64-bit layouts) and POSIX message queues.
constexpr uint32_t kMsqidDs = 120, kMsginfo = 32, kSemidDs = 104, kSeminfo = 40, kShminfo = 72, kShmInfo = 48,
                   kMqAttr = 64;

// Why calls that share memory or state with the kernel outside any syscall
// cannot be replayed.
constexpr std::string_view kIoUring =
    "io_uring shares its rings with the kernel, which fills them as requests complete, outside any syscall";

// O_CREAT: mq_open reads its attributes.
constexpr uint32_t kOCreat = 0100;
// struct sigevent's sigev_notify, SIGEV_THREAD, and the cookie mq_notify
// reads for it (NOTIFY_COOKIE_LEN).
constexpr uint16_t kSigevNotifyOff = 12;
constexpr uint32_t kSigevThread = 2, kNotifyCookie = 32;

inline SubcommandInfo sub(int nr, uint64_t value, std::string_view name, std::initializer_list<rw_buf_spec> bufs = {},
                          FdEffect effect = FdEffect::None)
{
    return SubcommandInfo{nr, value, name, spec(bufs), effect};
}

// Its answer would show the recorder: the supervisor gives the program its
// own (enum rw_view).
inline SubcommandInfo shows_recorder(rw_view view, SubcommandInfo info)
{
    info.spec.view = static_cast<uint8_t>(view);
    return info;
}

inline SubcommandInfo keeps(SubcommandInfo info)
{
    info.blocking = Blocking::Never;
    return info;
}

// Refused for the reason `inspect` finds in input buffer `buffer`, if any.
inline SubcommandInfo inspected(int buffer, std::string_view (*inspect)(std::span<const uint8_t>), SubcommandInfo info)
{
    info.inspected = static_cast<int8_t>(buffer);
    info.inspect = inspect;
    return info;
}

} // namespace rw::table_builders
