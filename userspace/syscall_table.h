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
    bool keeps_cpu = false; // never blocks, and order matters to other threads (see keeps_cpu below)
};

// ioctl requests, prctl options, fcntl commands…: the buffers depend on one
// argument's value.
struct SubcommandInfo {
    int nr;
    uint64_t value;
    std::string_view name;
    rw_sys_spec spec;
    FdEffect fd_effect = FdEffect::None;
    bool keeps_cpu = false;
};

// The descriptor effect of one call (resolving fcntl's commands).
FdEffect fd_effect(int nr, const uint64_t (&args)[RW_MAX_ARGS]);

// While recording a multithreaded process, a thread keeps the CPU through
// this call (it never blocks, and its order matters to the other threads:
// memory maps, clone, exit, futex wake…); any other call may block, so the
// thread gives the CPU up at its entry.
bool keeps_cpu(int nr, const uint64_t (&args)[RW_MAX_ARGS]);

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
