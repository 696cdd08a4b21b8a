// Replaying syscall events: serve from the log, or run for real and check.
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>

#include "text.h"
#include "event_format.h"
#include "replay_limits.h"
#include "remote_syscall.h"
#include "replayer.h"
#include "syscall_restart.h"

namespace rw::replay {
namespace {

std::string call_text(const SyscallEvent& e)
{
    std::string t = format_syscall_call(e);
    return t.substr(0, t.rfind(" = "));
}

// Where two byte strings first differ, with a little context, for reports.
std::string first_difference(const std::vector<uint8_t>& expected, const std::vector<uint8_t>& actual)
{
    size_t i = 0;
    while (i < expected.size() && i < actual.size() && expected[i] == actual[i])
        i++;
    size_t from = i > 8 ? i - 8 : 0;
    auto excerpt = [&](const std::vector<uint8_t>& v) {
        if (from >= v.size())
            return std::string("(ends)");
        return "\"" + escape_bytes(v.data() + from, v.size() - from, 40) + "\"";
    };
    return "  first difference at byte " + std::to_string(i) + "\n  expected " + excerpt(expected) + "\n  actual   " +
           excerpt(actual);
}

// The xxh3-64 of `length` bytes of the tracee's memory at `addr`, read a
// piece at a time; nothing if any of it is unreadable.
std::optional<uint64_t> remote_hash(const TraceeMemory& mem, uint64_t addr, uint64_t length)
{
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), XXH3_freeState);
    XXH3_64bits_reset(state.get());
    std::vector<uint8_t> piece(std::min<uint64_t>(length, 1 << 20));
    for (uint64_t done = 0; done < length;) {
        size_t n = std::min<uint64_t>(piece.size(), length - done);
        if (!mem.read(RemoteAddr(addr + done), {piece.data(), n}))
            return std::nullopt;
        XXH3_64bits_update(state.get(), piece.data(), n);
        done += n;
    }
    return XXH3_64bits_digest(state.get());
}

bool is_write_call(int nr)
{
    return nr == SYS_write || nr == SYS_writev || nr == SYS_pwrite64 || nr == SYS_pwritev || nr == SYS_pwritev2;
}

} // namespace

void Replayer::on_syscall(const SyscallEvent& e)
{
    if (skipped_in_parallel(e)) {
        on_recorded_timeout(e);
        return;
    }
    Task& t = task(e.tid);
    if (parallel_trace())
        finish_pending_sync(t);
    if (e.flags & kSyscallChildReturn) {
        apply_child_return(t, e);
        return;
    }
    if (t.at == Task::At::ExecutingCall) {
        finish_executing_call(t, e);
        return;
    }
    const SyscallInfo* info = find_syscall(e.nr);
    if (!info || (e.flags & (kSyscallUnknown | kSyscallUnknownSubcommand | kSyscallUnsized)) ||
        info->replay == ReplayAction::Refuse) {
        if (auto why = replay_limit(e))
            refuse(e.tid, *why, "  the call: " + call_text(e));
        emulate(t, e); // it failed: its result is all it did
        return;
    }
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    ReplayAction action = replay_action(*info, args);
    switch (action) {
    case ReplayAction::Exec:
        // An exec that replaced the image has its exec event first (the
        // recorder takes it at the exec stop, before the call returns), and
        // that event leaves the thread inside the call (above). Without
        // one, the call never ran, whatever it returned: a seccomp filter
        // trapped it (rax keeps the call's number), or made it return an
        // errno, or 0.
        action = ReplayAction::Emulate;
        break;
    case ReplayAction::Clone:
        if (e.ret >= 0)
            refuse(e.tid, "a successful " + syscall_name(e.nr) + " without its exec or fork event in the trace");
        action = ReplayAction::Emulate; // it failed: nothing to rebuild
        break;
    case ReplayAction::Mmap:
    case ReplayAction::AttachSegment:
        if (e.ret < 0)
            action = ReplayAction::Emulate;
        break;
    case ReplayAction::Exit:
        if (skipped_by_sigkill(e)) {
            action = ReplayAction::Emulate;
            break;
        }
        refuse(e.tid, "an exit syscall that returned");
    case ReplayAction::ExecuteRestore:
        if (e.ret < 0)
            action = ReplayAction::Emulate; // it failed: its result is all it did
        break;
    default:
        break;
    }
    if (action == ReplayAction::Emulate) {
        emulate(t, e);
        apply_tracer_request(t, e);
    } else
        execute(t, e, action);
    if (e.flags & kSyscallMappedWrite)
        apply_mapped_write(t, e);
    if (e.flags & kSyscallWroteProcess)
        apply_process_write(t, e);
}

bool Replayer::skipped_by_sigkill(const SyscallEvent& e)
{
    // An exit that "returned" ENOSYS never ran: a SIGKILL (the recorder's,
    // for processes left running when the first one exited) caught the
    // thread at the call's entry, and the kernel skipped the call. Its
    // death by SIGKILL is its next event.
    if (e.ret != -ENOSYS)
        return false;
    const IndexedEvent* next = source_.peek_for_task(e.tid);
    const auto* exit = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    return exit && WIFSIGNALED(exit->exit_code) && WTERMSIG(exit->exit_code) == SIGKILL;
}

StopInfo Replayer::past_group_stop(Task& t, StopInfo s, Resume how, const std::string& what)
{
    // A group stop the recording left without a SIGCONT: a recorded tracer
    // resumed the thread (the recorder resumes a tracee for its tracer).
    // Or the notice a seized thread gets when a SIGCONT ends its group's
    // stop (PTRACE_EVENT_STOP with SIGTRAP): a thread that was stopped by
    // the replay when a sibling's SIGSTOP stopped the group, and the
    // SIGCONT came before it ran again.
    auto group_stop_notice = [](const StopInfo& stop) {
        return stop.kind == StopInfo::Kind::GroupStop && (is_stop_signal(stop.signal) || stop.signal == SIGTRAP);
    };
    for (int stops = 0; group_stop_notice(s) && stops < 4; stops++) {
        resume(t, how);
        s = wait_stop(t, what);
    }
    return s;
}

void Replayer::apply_mapped_write(Task& t, const SyscallEvent& e)
{
    // The file it wrote is mapped (by this process or another): replay
    // emulated the call, so the mappings change here as the kernel
    // changed them.
    try {
        mapped_files_.apply(e);
    } catch (const std::exception& x) {
        diverge(t, call_text(e) + " wrote a mapped file, which the replay cannot change likewise: " + x.what());
    }
}

void Replayer::emulate(Task& t, const SyscallEvent& e)
{
    emulated_calls_++;
    if (serve_by_notification(t, e)) {
        notified_calls_++;
        return;
    }
    collect_fresh(t);
    run_to_syscall_entry(t, e, Resume::Emulate);
    t.emulated_entry = true;
    set_result(t, e);
    after_syscall(t, e);
}

void Replayer::run_to_syscall_entry(Task& t, const SyscallEvent& e, Resume how)
{
    if (t.stop_pending)
        t.stop_pending = false; // a notified run ended with the thread on its way (replay_notified.cpp)
    else
        resume(t, how);
    restartable_ = true;
    StopInfo s = wait_stop(t, syscall_name(e.nr) + "()");
    for (int waits = 0; how == Resume::Emulate && s.kind == StopInfo::Kind::SyscallStop && unrecorded_wait(t, e);
         waits++) {
        // In a parallel trace, a futex wait the recording did not have:
        // glibc waiting for a thread still inside a call (pthread_cond_destroy
        // for a woken waiter to leave), which in the recording had left. The
        // woken threads leave; the wait returns as a spurious wake-up
        // (EAGAIN), after which glibc looks at its word again.
        bool progress = advance_woken_sync_calls(t.recorded_tid(), t.regs()[Registers::RDI]);
        if (!progress && waits > kUnrecordedWaits) {
            uint32_t word = 0;
            uint64_t addr = t.regs()[Registers::RDI];
            t.memory().read(RemoteAddr(addr), {reinterpret_cast<uint8_t*>(&word), sizeof(word)});
            diverge(t,
                    "expected " + call_text(e) +
                        ", but the thread waits again and again in a futex the "
                        "recording did not have, which no thread releases",
                    "  the futex: " + hex(addr) + ", waiting while it holds " +
                        std::to_string(t.regs()[Registers::RDX]) + " (it holds " + std::to_string(word) + ")");
        }
        Registers r = t.regs();
        r[Registers::RAX] = static_cast<uint64_t>(-EAGAIN);
        t.set_regs(r);
        resume(t, how);
        s = wait_stop(t, syscall_name(e.nr) + "()");
    }
    s = past_group_stop(t, s, how, syscall_name(e.nr) + "()");
    restartable_ = false;
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "expected " + call_text(e) + ", got " + describe_stop(t, s));
    check_call(t, e);
    check_inputs(t, e);
}

bool Replayer::unrecorded_wait(Task& t, const SyscallEvent& e)
{
    if (!parallel_trace())
        return false;
    const Registers& r = t.regs();
    if (static_cast<int64_t>(r[Registers::ORIG_RAX]) != SYS_futex || e.nr == SYS_futex)
        return false;
    return futex_op_waits(r[Registers::RSI]);
}

void Replayer::check_call(Task& t, const SyscallEvent& e)
{
    const Registers& r = t.regs();
    int nr = static_cast<int>(static_cast<int64_t>(r[Registers::ORIG_RAX]));
    std::array<uint64_t, 6> args = {r[Registers::RDI], r[Registers::RSI], r[Registers::RDX],
                                    r[Registers::R10], r[Registers::R8],  r[Registers::R9]};
    SyscallEvent actual;
    actual.nr = nr;
    actual.args = args;
    if (nr != e.nr)
        diverge(t, "expected " + call_text(e) + ", got " + call_text(actual));
    const SyscallInfo* info = find_syscall(e.nr);
    if (info && info->replay == ReplayAction::Sigreturn)
        return; // its "arguments" are whatever the handler left
    size_t nargs = info ? info->arg_formats.size() : 6;
    for (size_t i = 0; i < nargs; i++)
        if (args[i] != e.args[i])
            diverge(t, "argument " + std::to_string(i + 1) + " of " + syscall_name(e.nr) + " differs",
                    "  expected " + call_text(e) + "\n  actual   " + call_text(actual));
    if (parallel_trace())
        restore_unused_arguments(t, e, nargs);
}

void Replayer::restore_unused_arguments(Task& t, const SyscallEvent& e, size_t used)
{
    // The probes of a parallel recording (uprobes on libc's synchronization
    // calls) can return to the program with a register it does not use in
    // another state than a run without them, and a later fault's registers
    // would then differ from the recording's. The event holds every
    // argument register as the recording had it (the kernel keeps them), so
    // the ones the call does not read are given their recorded values.
    static constexpr Registers::Index kArgumentRegisters[] = {Registers::RDI, Registers::RSI, Registers::RDX,
                                                              Registers::R10, Registers::R8,  Registers::R9};
    Registers r = t.regs();
    bool changed = false;
    for (size_t i = used; i < 6; i++)
        if (r[kArgumentRegisters[i]] != e.args[i]) {
            r[kArgumentRegisters[i]] = e.args[i];
            changed = true;
        }
    if (changed)
        t.set_regs(r);
}

void Replayer::check_inputs(Task& t, const SyscallEvent& e)
{
    TraceeMemory mem = t.memory();
    for (const auto& m : e.memory) {
        if (m.dir != Direction::In || m.unreadable || written_by_call(e, m))
            continue;
        // A hash-only range's length is the trace's word alone: it is read
        // a piece at a time, never allocated whole.
        std::vector<uint8_t> actual(m.hashed_only ? 0 : m.bytes.size());
        std::optional<uint64_t> hash = m.hashed_only ? remote_hash(mem, m.addr, m.length)
                                       : mem.read(RemoteAddr(m.addr), actual)
                                           ? std::optional(hash_bytes(actual.data(), actual.size()))
                                           : std::nullopt;
        if (!hash)
            diverge(t, "the memory " + syscall_name(e.nr) + " reads at " + hex(m.addr) + " is not readable");
        if (*hash == m.hash)
            continue;
        // The trace's bytes and its hash of them disagree: no run of the
        // program could match both. The event was altered, not the replay.
        if (!m.hashed_only && hash_bytes(m.bytes.data(), m.bytes.size()) != m.hash)
            throw ReplayError(ReplayErrorKind::Damaged, current_, t.recorded_tid(),
                              "the trace's record of the data passed to " + call_text(e) + " is inconsistent",
                              "  the " + std::to_string(m.bytes.size()) + " bytes it keeps at " + hex(m.addr) +
                                  " do not have the hash it keeps of them (the event was altered after recording)");
        std::string details = m.hashed_only ? "  (" + std::to_string(m.length) + " bytes; the trace keeps a hash)"
                                            : first_difference(m.bytes, actual);
        diverge(t,
                "the data passed to " + call_text(e) + " differs (" + std::to_string(m.length) + " bytes at " +
                    hex(m.addr) + ")",
                details);
    }
}

void Replayer::write_outputs(Task& t, const SyscallEvent& e)
{
    TraceeMemory mem = t.memory();
    for (const auto& m : e.memory) {
        // An output the recording could not read was not mapped when the
        // call returned (it was read in the thread's exit stop, before the
        // program ran on): the kernel wrote nothing there.
        if (m.dir != Direction::Out || m.unreadable)
            continue;
        if (!mem.write(RemoteAddr(m.addr), m.bytes))
            diverge(t, "cannot restore what " + call_text(e) + " wrote at " + hex(m.addr) + " (" +
                           std::to_string(m.length) + " bytes): the memory is not mapped in the replay");
    }
}

void Replayer::check_outputs_match(Task& t, const SyscallEvent& e)
{
    TraceeMemory mem = t.memory();
    for (const auto& m : e.memory) {
        if (m.dir != Direction::Out || m.unreadable)
            continue;
        std::vector<uint8_t> actual(m.length);
        if (!mem.read(RemoteAddr(m.addr), actual) || actual != m.bytes)
            diverge(t, call_text(e) + " wrote different data at " + hex(m.addr), first_difference(m.bytes, actual));
    }
}

void Replayer::write_recorded_result(Task& t, const SyscallEvent& e)
{
    write_outputs(t, e);
    Registers r = t.regs();
    r[Registers::RAX] = static_cast<uint64_t>(e.ret);
    t.set_regs(r);
}

void Replayer::set_result(Task& t, const SyscallEvent& e)
{
    write_outputs(t, e);
    Registers r = t.regs();
    r[Registers::RAX] = static_cast<uint64_t>(e.ret);
    if (restarts(e.ret)) {
        // Interrupted, and no signal delivered here in the recording: the
        // kernel restarted the call. Do what it did.
        const IndexedEvent* next = source_.peek_for_task(e.tid);
        const auto* sig = next ? std::get_if<SignalEvent>(&next->event) : nullptr;
        bool delivered_here = sig && sig->kind == SignalKind::AtSyscall && sig->anchor_seq == e.seq;
        if (!delivered_here) {
            r[Registers::RAX] = e.ret == kErestartRestartBlock ? SYS_restart_syscall : r[Registers::ORIG_RAX];
            r[Registers::RIP] -= 2;
        }
    }
    t.set_regs(r);
}

void Replayer::after_syscall(Task& t, const SyscallEvent& e)
{
    t.last_syscall_seq = e.seq;
    if (e.nr == SYS_unshare && e.ret == 0 && (e.args[0] & CLONE_FILES))
        t.own_fds = std::make_shared<StdioFds>(t.fds()); // its table is its own from now on
    t.fds().apply(e);
    if (e.nr == SYS_pidfd_getfd && e.ret >= 0) {
        // A copy of another process's descriptor: its stream, if any, is
        // what that descriptor leads to there.
        auto pid = t.fds().process_of_pidfd(e.args[0]);
        Task* other = pid ? find_task(static_cast<Tid>(*pid)) : nullptr;
        t.fds().copied_from_process(static_cast<uint64_t>(e.ret), other ? other->fds().stream_of(e.args[1]) : -1);
    }
    if (e.nr == SYS_madvise && e.ret == 0 && (e.args[2] == MADV_DONTFORK || e.args[2] == MADV_WIPEONFORK))
        t.vm()->keeps_from_forks = true;
    if (e.nr == SYS_shmget && e.ret >= 0)
        note_segment_made(e);
    if (e.nr == SYS_set_tid_address)
        t.clear_child_tid = e.args[0]; // the kernel holds it per thread: snapshots restore it
    if (e.nr == SYS_sigaltstack && e.args[0] && e.ret == 0)
        t.alt_stack = true;
    if (options_.echo_output && is_write_call(e.nr) && e.ret > 0)
        echo(t, e);
}

void Replayer::echo(Task& t, const SyscallEvent& e)
{
    // Output shows once: going back in time and replaying again is silent.
    if (current_ < echoed_.size() && echoed_[current_] && !options_.echo_repeats)
        return;
    if (current_ < echo_from_)
        return;
    if (current_ >= echoed_.size())
        echoed_.resize(current_ + 1);
    echoed_[current_] = true;
    int stream = t.fds().stream_of(e.args[0]);
    if (stream != 1 && stream != 2)
        return;
    for (const auto& m : e.memory) {
        if (m.dir != Direction::In)
            continue;
        if (m.hashed_only || m.unreadable) {
            if (!warned_unechoed_)
                std::fprintf(stderr, "rewind: %llu bytes of output were not kept in the trace\n",
                             static_cast<unsigned long long>(m.length));
            warned_unechoed_ = true;
            continue;
        }
        size_t done = 0;
        while (done < m.bytes.size()) {
            int fd = stream == 1 ? options_.stdout_fd : options_.stderr_fd;
            ssize_t n = ::write(fd, m.bytes.data() + done, m.bytes.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            done += static_cast<size_t>(n);
        }
    }
}

void Replayer::execute(Task& t, const SyscallEvent& e, ReplayAction action)
{
    collect_fresh(t);
    run_to_syscall_entry(t, e, Resume::Syscall);
    keep_agent_clear(t, e);
    if (action == ReplayAction::Mmap || action == ReplayAction::AttachSegment) {
        if (action == ReplayAction::Mmap)
            replay_mmap(t, e);
        else
            attach_segment(t, e);
        after_syscall(t, e);
        return;
    }
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "the return of " + syscall_name(e.nr) + "()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "expected " + call_text(e) + " to return, got " + describe_stop(t, s));
    t.at = Task::At::SyscallExit;
    int64_t real = static_cast<int64_t>(t.regs()[Registers::RAX]);
    switch (action) {
    case ReplayAction::ExecuteCheck:
        if (real != e.ret)
            diverge(t, call_text(e) + " returned " + format_return(e.nr, real) + " in the replay, " +
                           format_return(e.nr, e.ret) + " in the recording");
        check_outputs_match(t, e);
        break;
    case ReplayAction::ExecuteRestore:
        write_recorded_result(t, e);
        break;
    case ReplayAction::Sigreturn:
        if (real != e.ret)
            diverge(t, "rt_sigreturn restored a different context (rax " + hex(static_cast<uint64_t>(real)) +
                           ", recorded " + hex(static_cast<uint64_t>(e.ret)) + ")");
        break;
    default:
        break;
    }
    after_syscall(t, e);
}

void Replayer::finish_executing_call(Task& t, const SyscallEvent& e)
{
    // A vfork parent returns only once its child has exec'd or exited; the
    // stream may put the parent's return first, so the child goes ahead as
    // far as its exec (on_exec releases the parent), no further.
    while (t.vfork_child) {
        Task* child = find_task(t.vfork_child);
        if (!child || child->at == Task::At::ExecutingCall) // gone, or inside its execve
            break;
        auto ahead = source_.take_for_task(t.vfork_child);
        if (!ahead)
            refuse(e.tid, "the trace ends before vfork child " + std::to_string(t.vfork_child) + " execs or exits");
        uint64_t saved = current_;
        current_ = ahead->index;
        dispatch(*ahead);
        current_ = saved;
    }
    bool was_vfork = (clone_flags(e) & CLONE_VFORK) != 0;
    t.vfork_child = 0;
    try {
        resume(t, Resume::Syscall);
    } catch (const std::system_error& x) {
        if (x.code().value() == ESRCH && killed_before_return(t))
            return;
        throw;
    }
    StopInfo s = wait_stop(t, "the return of " + syscall_name(e.nr) + "()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "expected " + syscall_name(e.nr) + " to return, got " + describe_stop(t, s));
    t.at = Task::At::SyscallExit;
    int64_t real = static_cast<int64_t>(t.regs()[Registers::RAX]);
    if (e.nr == SYS_execve || e.nr == SYS_execveat) {
        if (real != 0)
            diverge(t, "execve returned " + format_return(e.nr, real));
    } else {
        if (hook_ && was_vfork && (t.group().tasks.size() == 1))
            hook_->after_fork(t);
        // clone/fork: the child's thread id as the recording saw it.
        write_recorded_result(t, e);
    }
    after_syscall(t, e);
}

bool Replayer::killed_before_return(Task& t)
{
    // The kernel reports the return of a call that its thread was already
    // being killed in: a process in a PID namespace whose init was killed
    // (every process of the namespace is), or a sibling's exit_group. The
    // recording shows the return, then the thread's death by SIGKILL. The
    // replay's kernel, on another schedule, may kill the thread before
    // the return: resuming it finds it gone, and its exit event, next,
    // collects its end. Any other thread that vanished is a divergence.
    const IndexedEvent* next = source_.peek_for_task(t.recorded_tid());
    const auto* exit = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    if (!exit || !WIFSIGNALED(exit->exit_code) || WTERMSIG(exit->exit_code) != SIGKILL)
        return false;
    t.group().killed = true;
    return true;
}

void Replayer::apply_child_return(Task& t, const SyscallEvent& e)
{
    if (t.group().killed)
        return; // it is dying with its process: its exit event collects it
    collect_fresh(t);
    if (t.at == Task::At::Gone)
        return; // ended with its process before it ran: its exit event collects it
    try {
        store_recorded_tid(t, t.child_settid, t.child_settid_value);
        write_recorded_result(t, e);
    } catch (const std::system_error& x) {
        // Killed with its process (a sibling's exit_group) after its first
        // stop: in the recording too its return from clone was reported
        // after that exit, with its end next, which collects it.
        const IndexedEvent* next = source_.peek_for_task(t.recorded_tid());
        if (x.code().value() != ESRCH || !next || !std::holds_alternative<ExitEvent>(next->event))
            throw;
        return;
    }
    after_syscall(t, e);
}

void Replayer::run_entered_call_as(Task& t, const SyscallEvent& e,
                                   std::initializer_list<std::pair<Registers::Index, uint64_t>> changed)
{
    // The kernel sees the changed arguments; the program gets its own
    // registers back after the call, with the result.
    Registers entry = t.regs();
    Registers r = entry;
    for (const auto& [index, value] : changed)
        r[index] = value;
    t.set_regs(r);
    std::string name = syscall_name(e.nr);
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "the return of " + name + "()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, name + " did not return: " + describe_stop(t, s));
    auto got = static_cast<int64_t>(t.regs()[Registers::RAX]);
    if (got != e.ret)
        diverge(t, name + " returned " + format_return(e.nr, got) + " in the replay, " + format_return(e.nr, e.ret) +
                       " in the recording");
    entry[Registers::RAX] = static_cast<uint64_t>(got);
    t.set_regs(entry);
    t.at = Task::At::SyscallExit;
}

void Replayer::replay_mmap(Task& t, const SyscallEvent& e)
{
    uint64_t addr = static_cast<uint64_t>(e.ret), len = e.args[1], prot = e.args[2], flags = e.args[3],
             offset = e.args[5];
    uint64_t fixed = (flags & ~uint64_t(MAP_FIXED_NOREPLACE)) | MAP_FIXED;
    bool anonymous = flags & MAP_ANONYMOUS;
    if (!anonymous && e.file && e.file->content_hash.empty() && e.file->path == "/dev/zero") {
        anonymous = true; // a private /dev/zero mapping is zero-filled memory
        fixed |= MAP_ANONYMOUS;
        offset = 0;
    }
    if (anonymous) {
        run_entered_call_as(t, e,
                            {{Registers::RDI, addr},
                             {Registers::R10, fixed},
                             {Registers::R8, static_cast<uint64_t>(-1)},
                             {Registers::R9, offset}});
        return;
    }
    if (!e.file || e.file->content_hash.empty())
        refuse(e.tid, "mmap of " + (e.file ? e.file->path : std::string("a file")) +
                          ": the file's content is not in the trace (a device, or its copy failed)");
    std::string path = checked_copy(e.tid, e.file->content_hash, e.file->path);
    bool shared = flags & MAP_SHARED;
    bool shared_writable = shared && (prot & PROT_WRITE);
    FileIdentity identity{e.file->dev, e.file->ino};
    // A read-only shared mapping of a file nobody writes while it is mapped
    // (glibc's gconv cache) shows the trace's copy as it is.
    bool changes_while_mapped = written_while_mapped_.contains(identity) ||
                                (shared && (!mapped_shared_writable_ || mapped_shared_writable_->contains(identity)));
    if (shared_writable || changes_while_mapped) {
        // The replay's own copy of the file, which every mapping of it
        // shares (mapped_file_copies.h); the trace's copy stays as it is.
        try {
            path = mapped_files_.path_for(*e.file, path);
        } catch (const std::exception& x) {
            refuse(e.tid, "mmap of " + e.file->path + ": " + x.what());
        }
    }
    OwnCalls own(injecting_); // (openat and close go through the seccomp listener)
    RemoteSyscalls remote(t, waiter_, [this, &t](const StopInfo& s) { return defer_own_interrupt(t, s); });
    uint64_t path_addr = remote.push_string(path);
    int64_t fd = remote.call(SYS_openat, static_cast<uint64_t>(AT_FDCWD), path_addr,
                             (shared_writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        refuse(e.tid, "the replayed process cannot open the trace's copy of " + e.file->path + ": " +
                          strerror(static_cast<int>(-fd)));
    int64_t got = remote.call(SYS_mmap, addr, len, prot, fixed, static_cast<uint64_t>(fd), offset);
    remote.call(SYS_close, static_cast<uint64_t>(fd));
    if (got != e.ret)
        diverge(t, "mmap of " + e.file->path + " returned " + hex(static_cast<uint64_t>(got)) + " in the replay, " +
                       hex(addr) + " in the recording");
    remote.finish(e.ret);
    t.at = Task::At::SyscallExit;
}

} // namespace rw::replay
