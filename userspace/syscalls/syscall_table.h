// The one declarative syscall table: what each syscall reads and writes in
// user memory (uploaded to the kernel-side capture), what replay does with
// it, and how `rewind dump` prints it.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rewind_abi.h"

namespace rw {

// What replay does when the program makes the syscall.
enum class ReplayAction : uint8_t {
    Emulate,        // do not run it: return value and written memory from the log
    ExecuteCheck,   // run it for real (it rebuilds process state); result must match
    ExecuteRestore, // run it for real, then impose the recorded result and memory
    Mmap,           // map at the recorded address from the trace's copy of the file
    AttachSegment,  // shmat: attach the replay's copy of the segment at the recorded address
    Clone,          // fork/vfork/clone/clone3: re-create the child
    Exec,           // execve/execveat: run the trace's copy of the program
    Exit,           // exit/exit_group
    Sigreturn,      // rt_sigreturn: restores registers; nothing to check
    Refuse,         // cannot be reproduced (shared state outside the recording)
};

std::string_view to_string(ReplayAction action);

// What a syscall does to the descriptor table (replay tracks which
// descriptors still lead to the user's stdin/stdout/stderr).
enum class FdEffect : uint8_t {
    None,
    NewFd,     // the return value is a new descriptor
    NewFdPair, // two new descriptors written to the first output buffer (pipe, socketpair)
    Dup,       // the return value is a copy of args[0]
    Dup2,      // args[1] becomes a copy of args[0]
    Close,     // args[0] is closed
    CloseRange // args[0]..args[1] are closed
};

// Whether a call may block: wait for something another thread of the
// process may do. While the threads of a process run one at a time, a
// thread gives the CPU up at the entry of a call that may block, and runs
// through any other call without a stop (thread_scheduler.h).
enum class Blocking : uint8_t {
    May,          // gives the CPU up (the default: unknown calls may block)
    OnDescriptor, // only if args[0] is a descriptor that can block: not a regular
                  // file, directory, block device or memory device (/dev/zero…),
                  // and not O_NONBLOCK
    Never,        // memory maps, clone, exit, futex wake, getters…
};

// One character per argument, for display:
//   d int  l long  u unsigned  x hex flags  o octal mode  p pointer  f fd
//   s string (an input buffer of the event)  S signal number
struct SyscallInfo {
    int nr;
    std::string_view name;
    std::string_view arg_formats;
    ReplayAction replay;
    rw_sys_spec spec;
    int8_t fd_arg; // descriptor argument whose data is kept in full, or -1
    FdEffect fd_effect = FdEffect::None;
    Blocking blocking = Blocking::May;
    // A call whose argument at this index is 0 only reads state (no new
    // value given): replay serves it from the log, whatever `replay` says
    // for the others. -1: none.
    int8_t query_when_null = -1;
    // Why a call replay refuses (ReplayAction::Refuse) cannot be
    // reproduced, as `rewind info` says it before a replay starts.
    std::string_view refusal = {};
};

// Whether this call of `info` only reads state (query_when_null).
inline bool is_query(const SyscallInfo& info, const uint64_t* args)
{
    return info.query_when_null >= 0 && args[info.query_when_null] == 0;
}

// ioctl requests, prctl options, fcntl commands…: the buffers depend on one
// argument's value.
struct SubcommandInfo {
    int nr;
    uint64_t value;
    std::string_view name;
    rw_sys_spec spec;
    FdEffect fd_effect = FdEffect::None;
    Blocking blocking = Blocking::May;
    // Refused when the input buffer `inspected` holds what this says is
    // beyond replay (a BPF program that writes into processes' memory):
    // the reason, or empty. The buffer is kept whole in the trace.
    int8_t inspected = -1;
    std::string_view (*inspect)(std::span<const uint8_t> input) = nullptr;
};

// The descriptor effect of one call (resolving fcntl's commands).
FdEffect fd_effect(int nr, const uint64_t (&args)[RW_MAX_ARGS]);

// What replay does with one call: the table's action, but
// - for madvise advice that acts only on fork children (MADV_DONTFORK,
//   MADV_WIPEONFORK), which is not applied. The replay's snapshots are
//   forks and must copy every page (V8 keeps node's heap out of its
//   children so); the program's own children map what they map at the
//   recorded addresses.
// - for a call that only reads state (is_query: an rt_sigprocmask without
//   a new set): served from the log. Every call that changes the mask
//   runs for real and its old mask is checked, so a replayed mask that
//   went astray shows there (bash reads its mask at every line a `read`
//   loop reads).
ReplayAction replay_action(const SyscallInfo& info, const uint64_t (&args)[RW_MAX_ARGS]);

// Why replay cannot reproduce a call whose action is ReplayAction::Refuse,
// naming the call.
std::string refusal_reason(const SyscallInfo& info);

// Whether one call may block (resolving subcommands; unknown calls and
// subcommands may). The kernel side decides the same from kernel_spec().
Blocking blocking(int nr, const uint64_t (&args)[RW_MAX_ARGS]);

// The spec the kernel side gets: the buffers, plus RW_SYS_MAY_BLOCK or
// RW_SYS_BLOCKS_ON_FD from `blocking`.
rw_sys_spec kernel_spec(const SyscallInfo& info);
rw_sys_spec kernel_spec(const SubcommandInfo& info);

std::span<const SyscallInfo> all_syscalls();
std::span<const SubcommandInfo> all_subcommands();

// nullptr when the syscall is not in the table (its effects are unknown).
const SyscallInfo* find_syscall(int nr);
const SubcommandInfo* find_subcommand(int nr, uint64_t value);

// Name for any x86-64 syscall number, known to the table or not.
std::string syscall_name(int nr);
// Number for a name, or -1.
int syscall_number(std::string_view name);

// The buffer description that applies to one call (resolving subcommands),
// exactly as the kernel side resolves it. `known` is false when the call's
// effects are unknown (not in the table, or an unknown subcommand).
struct ResolvedSpec {
    rw_sys_spec spec{};
    bool known = false;
    const SubcommandInfo* subcommand = nullptr;
};
ResolvedSpec resolve_spec(int nr, const uint64_t (&args)[RW_MAX_ARGS]);

} // namespace rw
