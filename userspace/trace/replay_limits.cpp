#include "replay_limits.h"

#include <elf.h>
#include <sys/ipc.h>
#include <sys/syscall.h>

#include "syscall_table.h"
#include "trace_summary.h"

namespace rw {

namespace {

std::optional<uint64_t> aux_value(const std::vector<uint64_t>& auxv, uint64_t key)
{
    for (size_t i = 0; i + 1 < auxv.size(); i += 2)
        if (auxv[i] == key)
            return auxv[i + 1];
    return std::nullopt;
}

} // namespace

bool failed(const SyscallEvent& e)
{
    // The kernel's error returns are -4095..-1; the restart codes (-512..)
    // are among them: an interrupted call that changed nothing yet.
    return e.ret < 0 && e.ret >= -4095;
}

bool is_credential_aux(uint64_t key)
{
    return key == AT_UID || key == AT_EUID || key == AT_GID || key == AT_EGID;
}

std::optional<std::string> replay_limit(const SyscallEvent& e)
{
    // A call that failed changed nothing: its result is replayed, whatever
    // the call.
    if (failed(e))
        return std::nullopt;
    if (e.flags & (kSyscallUnknown | kSyscallUnknownSubcommand))
        return describe_unknown(e) + " has effects rewind does not know (it is not in the syscall table)";
    const SyscallInfo* info = find_syscall(e.nr);
    if (!info)
        return "syscall " + std::to_string(e.nr) + " is not in the syscall table";
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    if ((e.flags & kSyscallUnsized) && info->spec.view == RW_VIEW_WRITES_PROCESS)
        return describe_unknown(e) +
               " wrote into another process's memory in pieces the recorder did not follow: what it wrote there is "
               "not in the trace";
    if (e.flags & kSyscallUnsized)
        return describe_unknown(e) +
               ": the size of what it wrote is kept in kernel state the recorder could not read (a semaphore set "
               "another process removed meanwhile, a descriptor replaced meanwhile), so its output is not in the trace";
    if (info->replay == ReplayAction::Refuse)
        return refusal_reason(*info);
    if (const SubcommandInfo* sub = resolve_spec(e.nr, args).subcommand; sub && sub->inspect) {
        for (const auto& m : e.memory) {
            if (m.buffer != sub->inspected || m.dir != Direction::In || m.unreadable)
                continue;
            std::string name = syscall_name(e.nr) + "(" + std::string(sub->name) + ")";
            if (m.hashed_only)
                return name + " cannot be replayed: what it was given is not in the trace, to be looked at";
            std::string_view why = sub->inspect(m.bytes);
            if (!why.empty())
                return name + " cannot be replayed: " + std::string(why);
        }
    }
    return std::nullopt;
}

bool RecordedSegments::note(const SyscallEvent& e)
{
    if (e.nr != SYS_shmget || failed(e))
        return false;
    uint64_t key = e.args[0], flags = e.args[2];
    if (key != IPC_PRIVATE && (flags & (IPC_CREAT | IPC_EXCL)) != (IPC_CREAT | IPC_EXCL))
        return false;
    made_.insert(e.ret);
    return true;
}

std::optional<std::string> RecordedSegments::attach_limit(const SyscallEvent& e) const
{
    if (e.nr != SYS_shmat || failed(e) || made_.contains(static_cast<int64_t>(e.args[0])))
        return std::nullopt;
    return "shmat of System V segment " + std::to_string(e.args[0]) +
           " cannot be replayed: no shmget of the recording made it (it was looked up by its key), so what it held "
           "when the recording began is not in the trace";
}

std::optional<std::string> replay_limit(const Event& event)
{
    if (const auto* e = std::get_if<SyscallEvent>(&event))
        return replay_limit(*e);
    if (const auto* e = std::get_if<ExecEvent>(&event)) {
        // A set-user-ID or set-group-ID program: the kernel placed it at
        // random addresses (it ignores the recorder's no-randomization for
        // such programs), which a replay cannot choose again.
        if (aux_value(e->auxv, AT_SECURE).value_or(0) != 0)
            return "exec of " + e->filename +
                   ", a set-user-ID or set-group-ID program: the kernel laid it out at random while recording, "
                   "which a replay cannot repeat";
    }
    return std::nullopt;
}

std::string parallel_replay_limit(const std::string& thread_mode)
{
    if (thread_mode != "parallel")
        return "";
    return "threads recorded in parallel (record --parallel): replay orders them only at libc synchronization "
           "calls and syscalls, so a data race or lock-free sharing between them can replay with values the "
           "recording never had, unnoticed until it changes a syscall, a synchronization call or the exit status";
}

} // namespace rw
