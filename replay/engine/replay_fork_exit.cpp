// New threads and processes, and their ends: each takes the recorded id it
// had, and an exit runs in the order the recording saw.
#include "replayer.h"
#include "robust_futexes.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <csignal>
#include <cstring>
#include <optional>
#include <string>
#include <system_error>
#include <thread>

#include "steady_now.h"
#include "text.h"

namespace rw::replay {

namespace {

// Where a clone call asks the kernel to store the new thread's id:
// CLONE_PARENT_SETTID and CLONE_CHILD_SETTID (0 when not given).
struct SetTidAddresses {
    uint64_t parent = 0, child = 0;
};

SetTidAddresses settid_addresses(const SyscallEvent& call)
{
    SetTidAddresses a;
    if (call.nr == SYS_clone) {
        a.parent = call.args[2];
        a.child = call.args[3];
    } else if (call.nr == SYS_clone3) {
        for (const auto& m : call.memory)
            if (m.dir == Direction::In && m.bytes.size() >= 32) {
                std::memcpy(&a.child, m.bytes.data() + 16, 8);
                std::memcpy(&a.parent, m.bytes.data() + 24, 8);
            }
    }
    return a;
}

} // namespace

void Replayer::store_recorded_tid(Task& t, uint64_t addr, Tid recorded)
{
    // The kernel stored the replay's own id there; the program must see the recorded one.
    int32_t value = recorded;
    if (addr && !t.memory().write(RemoteAddr(addr), {reinterpret_cast<const uint8_t*>(&value), sizeof(value)}))
        diverge(t, "cannot store the thread id " + std::to_string(recorded) + " where its clone asked (" + hex(addr) +
                       ")");
}

uint64_t clone_flags(const SyscallEvent& call)
{
    switch (call.nr) {
    case SYS_clone:
        return call.args[0];
    case SYS_vfork:
        return CLONE_VM | CLONE_VFORK;
    case SYS_clone3:
        // struct clone_args starts with the flags; the trace keeps its bytes.
        for (const auto& m : call.memory)
            if (m.dir == Direction::In && m.bytes.size() >= 8) {
                uint64_t flags;
                std::memcpy(&flags, m.bytes.data(), 8);
                return flags;
            }
        return 0;
    default:
        return 0;
    }
}

void Replayer::on_fork(const ForkEvent& e)
{
    Task& parent = task(e.parent_tid);
    collect_fresh(parent);
    // The parent's clone call follows later in the stream; its arguments are checked here.
    const IndexedEvent* call = source_.peek_for_task(e.parent_tid);
    const auto* sc = call ? std::get_if<SyscallEvent>(&call->event) : nullptr;
    // A recording that stopped early (refused, the disk full, the recorder
    // killed) can end while the parent is still inside the call: a vfork's
    // parent waits there for its child, a fork's child may run first.
    bool ends_early = !trace_.end() || !trace_.end()->complete;
    std::optional<SyscallEvent> unfinished;
    if (!sc && !call && ends_early) {
        unfinished = unfinished_clone(parent, e.child_tid);
        sc = &*unfinished;
    } else if (!sc) {
        refuse(e.parent_tid, "the trace has a new task without the clone that created it");
    } else {
        run_to_syscall_entry(parent, *sc, Resume::Syscall);
    }
    // The child gets a copy of the parent's memory, debugger breakpoints
    // included, unless it is a thread of the same process.
    bool copies_memory = !e.is_thread();
    if (hook_ && copies_memory)
        hook_->before_fork(parent);
    // CLONE_UNTRACED would keep the child from the replayer (the recorder
    // followed it in the kernel): the call runs without it, and the flags
    // are put back where the parent reads them.
    std::optional<uint64_t> untraced_at = clear_clone_untraced(parent, *sc);
    resume(parent, Resume::Syscall);
    StopInfo s = wait_stop(parent, "the creation of task " + std::to_string(e.child_tid));
    if (s.kind != StopInfo::Kind::PtraceEvent ||
        (s.event != PTRACE_EVENT_FORK && s.event != PTRACE_EVENT_VFORK && s.event != PTRACE_EVENT_CLONE))
        diverge(parent, syscall_name(sc->nr) + " did not create a task: got " + describe_stop(parent, s));
    pid_t child = static_cast<pid_t>(get_event_msg(parent.tid()));
    if (untraced_at)
        restore_clone_untraced(parent, *untraced_at, child, e.is_thread());
    uint64_t flags = clone_flags(*sc);
    std::shared_ptr<ThreadGroup> group;
    std::shared_ptr<AddressSpace> vm;
    if (e.is_thread()) {
        group = parent.group_ptr();
    } else {
        group = std::make_shared<ThreadGroup>();
        group->recorded_tgid = e.child_tgid;
        group->tgid = child;
        group->fds = (flags & CLONE_FILES) ? parent.fds_ptr() : std::make_shared<StdioFds>(parent.fds());
    }
    if (flags & CLONE_VM) {
        vm = parent.vm();
    } else {
        vm = std::make_shared<AddressSpace>();
        vm->id = next_vm_id_++;
        vm->keeps_from_forks = parent.vm()->keeps_from_forks; // the advice is inherited
    }
    Task& created = add_task(child, e.child_tid, group, vm);
    if (e.is_thread() && (parent.own_fds || !(flags & CLONE_FILES)))
        created.own_fds = (flags & CLONE_FILES) ? parent.own_fds : std::make_shared<StdioFds>(parent.fds());
    // Only the parent's call says where: the child's own record of it reads
    // the arguments when the child first runs, after the parent moved on.
    SetTidAddresses settid = settid_addresses(*sc);
    // The ids the kernel stores are as PID namespaces see them: the
    // parent's (what its clone returns: a program in a namespace of its
    // own sees small numbers), and the child's own, the same unless the
    // child starts a namespace of its own, where it is 1. (A child forked
    // after its parent's unshare(CLONE_NEWPID) is taken as seeing the
    // parent's number.)
    Tid parent_view = sc->ret > 0 ? static_cast<Tid>(sc->ret) : e.child_tid;
    if (flags & CLONE_PARENT_SETTID)
        store_recorded_tid(parent, settid.parent, parent_view);
    if (flags & CLONE_CHILD_SETTID) {
        created.child_settid = settid.child; // written once the child has started
        created.child_settid_value = (flags & CLONE_NEWPID) ? 1 : parent_view;
    }
    if (flags & CLONE_CHILD_CLEARTID)
        created.clear_child_tid = settid.child;
    created.alt_stack = parent.alt_stack && !(flags & CLONE_VM); // a thread starts without one
    parent.at = Task::At::ExecutingCall;
    if (s.event == PTRACE_EVENT_VFORK)
        parent.vfork_child = e.child_tid;
    // A vfork child shares the parent's memory until it execs: breakpoints
    // come back when the parent returns (finish_executing_call).
    if (hook_ && copies_memory && !(flags & CLONE_VM))
        hook_->after_fork(parent);
}

std::optional<uint64_t> Replayer::clear_clone_untraced(Task& parent, const SyscallEvent& call)
{
    // Where the flags are: 0 for clone's register, else clone3's struct.
    if (!(clone_flags(call) & CLONE_UNTRACED))
        return std::nullopt;
    if (call.nr == SYS_clone) {
        Registers r = parent.regs();
        r[Registers::RDI] &= ~uint64_t(CLONE_UNTRACED);
        parent.set_regs(r);
        return 0;
    }
    uint64_t flags = clone_flags(call) & ~uint64_t(CLONE_UNTRACED);
    if (!parent.memory().write(RemoteAddr(call.args[0]), {reinterpret_cast<const uint8_t*>(&flags), sizeof flags}))
        diverge(parent, "cannot clear CLONE_UNTRACED in the arguments of clone3 at " + hex(call.args[0]));
    return call.args[0];
}

void Replayer::restore_clone_untraced(Task& parent, uint64_t at, pid_t child, bool same_memory)
{
    if (at == 0) {
        Registers r = parent.regs();
        r[Registers::RDI] |= CLONE_UNTRACED;
        parent.set_regs(r);
        return;
    }
    uint64_t flags = 0;
    TraceeMemory mem = parent.memory();
    std::vector<uint8_t> bytes(sizeof flags);
    if (!mem.read(RemoteAddr(at), bytes))
        diverge(parent, "cannot read the arguments of clone3 at " + hex(at));
    std::memcpy(&flags, bytes.data(), sizeof flags);
    flags |= CLONE_UNTRACED;
    const std::span<const uint8_t> restored{reinterpret_cast<const uint8_t*>(&flags), sizeof flags};
    mem.write(RemoteAddr(at), restored);
    if (!same_memory)
        TraceeMemory(child).write(RemoteAddr(at), restored); // its copy of the parent's memory
}

SyscallEvent Replayer::unfinished_clone(Task& parent, Tid child)
{
    std::string what = "the call that created task " + std::to_string(child);
    resume(parent, Resume::Syscall);
    StopInfo s = wait_stop(parent, what);
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(parent, "expected " + what + ", got " + describe_stop(parent, s));
    const Registers& r = parent.regs();
    SyscallEvent call;
    call.tid = parent.recorded_tid();
    call.nr = static_cast<int>(static_cast<int64_t>(r[Registers::ORIG_RAX]));
    call.args = {r[Registers::RDI], r[Registers::RSI], r[Registers::RDX],
                 r[Registers::R10], r[Registers::R8],  r[Registers::R9]};
    if (call.nr != SYS_clone && call.nr != SYS_clone3 && call.nr != SYS_fork && call.nr != SYS_vfork)
        diverge(parent, "expected " + what + ", got " + syscall_name(call.nr) + "()");
    if (call.nr == SYS_clone3) {
        // What clone_flags and settid_addresses read of struct clone_args.
        MemoryRange args;
        args.addr = call.args[0];
        args.dir = Direction::In;
        args.bytes.resize(32);
        args.length = args.bytes.size();
        if (!parent.memory().read(RemoteAddr(args.addr), args.bytes))
            diverge(parent, "cannot read the arguments of clone3 at " + hex(args.addr));
        call.memory.push_back(std::move(args));
    }
    return call;
}

std::optional<uint64_t> Replayer::stop_before_exit_call()
{
    const IndexedEvent* next = source_.peek();
    const auto* e = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    // Threads an exit_group killed may come first: the stop is before that call.
    if (const ExitEvent* caller = killed_by_group_exit_ahead(next))
        e = caller;
    Task* live = e ? find_task(e->tid) : nullptr;
    if (!live || WIFSIGNALED(e->exit_code) || (e->pending_nr != SYS_exit && e->pending_nr != SYS_exit_group) ||
        live->at == Task::At::Running || live->inject_signal)
        return std::nullopt;
    Task& t = *live;
    collect_fresh(t);
    SyscallEvent call;
    call.nr = e->pending_nr;
    call.args = e->pending_args;
    run_to_syscall_entry(t, call, Resume::Syscall);
    // Back out of the call: skip it, then put the registers as they were
    // just before the syscall instruction.
    Registers before = t.regs();
    before[Registers::RIP] -= 2;
    before[Registers::RAX] = before[Registers::ORIG_RAX];
    before[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    Registers skip = t.regs();
    skip[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    t.set_regs(skip);
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "the end of a skipped " + syscall_name(call.nr) + "()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "skipping " + syscall_name(call.nr) + "() gave " + describe_stop(t, s));
    t.set_regs(before);
    t.at = Task::At::SyscallExit;
    return before[Registers::RIP];
}

Task* Replayer::sibling_delivering(Task& t, int exit_code)
{
    if (!WIFSIGNALED(exit_code))
        return nullptr;
    for (Task* other : t.group().tasks)
        if (other != &t && other->inject_signal == WTERMSIG(exit_code) && other->at != Task::At::Gone)
            return other;
    return nullptr;
}

const ExitEvent* Replayer::group_exit_ahead(Task& t)
{
    // Near: the killed threads' exits come one after another, right before.
    constexpr size_t kNear = 64;
    for (Task* other : t.group().tasks) {
        if (other == &t || other->at == Task::At::Gone)
            continue;
        const IndexedEvent* next = source_.peek_for_task(other->recorded_tid(), 0, kNear);
        const auto* exit = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
        if (exit && exit->pending_nr == SYS_exit_group && !WIFSIGNALED(exit->exit_code))
            return exit;
    }
    return nullptr;
}

const ExitEvent* Replayer::killed_by_group_exit_ahead(const IndexedEvent* next)
{
    const auto* e = next ? std::get_if<ExitEvent>(&next->event) : nullptr;
    if (!e || WIFSIGNALED(e->exit_code) || e->pending_nr == SYS_exit || e->pending_nr == SYS_exit_group)
        return nullptr;
    Task* t = find_task(e->tid);
    return t ? group_exit_ahead(*t) : nullptr;
}

void Replayer::run_group_exit_ahead(Task& t)
{
    const ExitEvent* caller = group_exit_ahead(t);
    if (!caller)
        return;
    auto ahead = source_.take_for_task(caller->tid);
    uint64_t saved = current_;
    current_ = ahead->index;
    dispatch(*ahead);
    current_ = saved;
}

namespace {

// Killed in a syscall by a seccomp filter of the program's (SECCOMP_RET_KILL):
// the call is the thread's last event, and the kernel reported its exit
// with the call's number in place of a result.
bool killed_by_seccomp(const ExitEvent& e)
{
    return WIFSIGNALED(e.exit_code) && WTERMSIG(e.exit_code) == SIGSYS && e.pending_nr >= 0 &&
           e.pending_nr != SYS_exit && e.pending_nr != SYS_exit_group;
}

bool killed_from_outside(const ExitEvent& e)
{
    // (A thread a sibling's exit_group ends is reported killed by SIGKILL
    // too, but its process exits with the sibling's status.)
    auto by_sigkill = [](int status) { return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL; };
    return by_sigkill(e.exit_code) && by_sigkill(e.group_exit_code);
}

} // namespace

void Replayer::on_exit(const ExitEvent& e)
{
    Task* live = find_task(e.tid);
    StopInfo final;
    if (!live) {
        auto it = finished_.find(e.tid);
        if (it == finished_.end())
            refuse(e.tid, "the trace has an exit for thread " + std::to_string(e.tid) + ", unknown to the replay");
        final = it->second;
    } else {
        Task& t = *live;
        collect_fresh(t);
        // (Not for a thread a sibling's fatal signal takes with it: the
        // replay of that group death is timed against the kernel's.)
        bool own_end = !WIFSIGNALED(e.exit_code) || killed_from_outside(e);
        if (own_end && t.at != Task::At::Gone)
            release_robust_futexes(t.tid(), t.recorded_tid(), t.memory());
        if (ended_by_exec(t, e))
            return; // it stays where it stands: a sibling's exec ends it (replay_exec_threads.cpp)
        if (leaves_threads_behind(t, e)) {
            end_as_zombie(t, e);
            return;
        }
        bool voluntary = e.pending_nr == SYS_exit || e.pending_nr == SYS_exit_group;
        if (killed_by_seccomp(e) && !t.inject_signal && t.at != Task::At::Running) {
            // Replay installs none of the program's filters: SIGSYS, with
            // its default action whatever the program made it, ends the
            // thread where the filter did.
            force_default_action(t, SIGSYS, true);
            if (syscall(SYS_tgkill, t.group().tgid, t.tid(), SIGSYS) != 0)
                diverge(t, std::string("cannot send SIGSYS: ") + strerror(errno));
            resume(t, Resume::Emulate);
            StopInfo s = wait_stop(t, "the SIGSYS of a seccomp filter's kill");
            if (s.kind != StopInfo::Kind::SignalDelivery || s.signal != SIGSYS)
                diverge(t, "expected the SIGSYS of a seccomp filter's kill, got " + describe_stop(t, s));
            t.inject_signal = SIGSYS;
            resume(t, Resume::Cont);
        } else if (voluntary && !WIFSIGNALED(e.exit_code)) {
            SyscallEvent call;
            call.nr = e.pending_nr;
            call.args = e.pending_args;
            run_to_syscall_entry(t, call, Resume::Syscall);
            resume(t, Resume::Cont);
        } else if (killed_from_outside(e) && t.inject_signal != SIGKILL) {
            // The process was killed (SIGKILL) by a kill() that was replayed
            // from the log: the replay sends it. Whatever the thread was
            // doing (in a call, in a group stop, with a stop signal delivered
            // to it), the recording saw no more of it.
            ::kill(t.tid(), SIGKILL);
            t.group().killed = true;
        } else if (t.inject_signal) {
            // The fatal signal is the one just delivered.
            resume(t, Resume::Cont);
        } else if (Task* killer = sibling_delivering(t, e.exit_code)) {
            // A sibling's fatal signal, delivered but not yet acted on,
            // ends the whole process: it goes first, and this thread dies
            // of it as in the recording (a SIGKILL from here would end the
            // process with another signal).
            resume(*killer, Resume::Cont);
        } else if (WIFSIGNALED(e.exit_code) && t.at != Task::At::Running) {
            // Killed by a sibling's exit_group: the recording saw no more of
            // it, so neither does the replay.
            ::kill(t.tid(), SIGKILL);
            t.group().killed = true;
        } else if (t.at != Task::At::Running) {
            // A sibling's exit_group may already have taken it (it was
            // stopped in a futex the recording shows it never left): then
            // there is nothing to resume, only its end to collect. The
            // kernel may also report the killed threads' exits before the
            // exit of the thread that called exit_group: that call goes
            // first here, or this thread would wait for it forever.
            run_group_exit_ahead(t);
            try {
                resume(t, Resume::Cont);
            } catch (const std::system_error& x) {
                if (x.code().value() != ESRCH)
                    throw;
            }
        } else if (!WIFSIGNALED(e.exit_code)) {
            // Asleep in the futex of a synchronization call that runs for
            // real (a parallel trace): only the sibling's exit_group ends
            // it, and its exit may come first in the recording too.
            run_group_exit_ahead(t);
        }
        for (;;) {
            if (t.at == Task::At::Gone) { // its end is collected already (collect_fresh)
                final = *t.final_status;
                break;
            }
            final = wait_stop(t, "its exit");
            if (final.kind == StopInfo::Kind::Exited || final.kind == StopInfo::Kind::Signaled)
                break;
            if (final.kind == StopInfo::Kind::PtraceEvent && final.event == PTRACE_EVENT_EXIT) {
                resume(t, Resume::Cont);
                continue;
            }
            // A stop taken before a sibling's exit_group killed it (a woken
            // waiter held at its futex's exit): the kill ended that stop.
            if (!voluntary && !in_ptrace_stop(t.tid()))
                continue;
            diverge(t, "expected the thread to exit, got " + describe_stop(t, final));
        }
    }
    if (e.group_dead && live)
        collect_zombie_leader(*live);
    // A thread's own exit status is only meaningful for the thread that
    // ends its process; the others vanish with it.
    bool recorded_signaled = WIFSIGNALED(e.exit_code);
    bool replay_signaled = final.kind == StopInfo::Kind::Signaled;
    if (e.group_dead) {
        int rec = recorded_signaled ? WTERMSIG(e.exit_code) : WEXITSTATUS(e.exit_code);
        int got = replay_signaled ? final.signal : final.exit_code;
        if (recorded_signaled != replay_signaled || rec != got) {
            throw ReplayError(
                ReplayErrorKind::Divergence, current_, e.tid,
                std::string("thread ") + std::to_string(e.tid) + " ended differently",
                std::string("  recorded: ") +
                    (recorded_signaled ? "killed by " + signal_name(rec) : "exit " + std::to_string(rec)) +
                    "\n  replay:   " +
                    (replay_signaled ? "killed by " + signal_name(got) : "exit " + std::to_string(got)));
        }
    }
}

} // namespace rw::replay
