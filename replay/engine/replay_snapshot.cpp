// Snapshots of the replayed world, and syscalls injected into stopped tasks.
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <map>

#include "process_image.h"
#include "replayer.h"
#include "text.h"
#include "shared_pages.h"
#include "snapshot.h"
#include "sync_calls.h"
#include "syscall_restart.h"

namespace rw::replay {
namespace {

constexpr uint64_t kMadvCollapse = 25;      // MADV_COLLAPSE (Linux 6.1), newer than the C library's headers
constexpr uint64_t kMadvPopulateWrite = 23; // MADV_POPULATE_WRITE (Linux 5.14)

// A stop that comes before an injected syscall starts and is not the
// program's: a job-control stop, or the delivery of a stop, continue or
// child signal (a process restored by CRIU was stopped with SIGSTOP and
// its parent's namespace sends such signals). Resumed without the signal.
bool stray_stop(const StopInfo& s)
{
    return s.kind == StopInfo::Kind::GroupStop ||
           (s.kind == StopInfo::Kind::SignalDelivery &&
            (s.signal == SIGSTOP || s.signal == SIGCONT || s.signal == SIGCHLD || s.signal == SIGTSTP));
}

} // namespace

ReplaySnapshot::~ReplaySnapshot()
{
    for (const auto& t : tasks) {
        if (!t.pid)
            continue;
        waiter.discard(t.pid);
        ::kill(t.pid, SIGKILL);
    }
}

std::vector<pid_t> Replayer::live_processes()
{
    std::vector<pid_t> pids;
    for (Task* t : live_tasks())
        if (std::find(pids.begin(), pids.end(), t->group().tgid) == pids.end())
            pids.push_back(t->group().tgid);
    return pids;
}

std::vector<Task*> Replayer::live_tasks()
{
    std::vector<Task*> out;
    for (auto& [rec, t] : tasks_)
        if (t->at != Task::At::Gone)
            out.push_back(t.get());
    return out;
}

uint64_t Replayer::find_syscall_insn(Task& t)
{
    if (t.vm()->syscall_insn)
        return t.vm()->syscall_insn;
    // The vDSO (mapped though hidden from the program) has syscall
    // instructions in its fallbacks; so does any libc.
    auto maps = read_mappings(t.tid());
    std::stable_partition(maps.begin(), maps.end(), [](const Mapping& m) { return m.path == "[vdso]"; });
    TraceeMemory mem = t.memory();
    for (const auto& m : maps) {
        if (m.perms.size() < 3 || m.perms[2] != 'x' || m.path == "[vsyscall]")
            continue;
        std::vector<uint8_t> code(std::min<uint64_t>(m.end - m.start, 1 << 20));
        size_t n = mem.read_partial(RemoteAddr(m.start), code);
        for (size_t i = 0; i + 1 < n; i++) {
            if (code[i] == 0x0f && code[i + 1] == 0x05) {
                t.vm()->syscall_insn = m.start + i;
                return t.vm()->syscall_insn;
            }
        }
    }
    refuse(t.recorded_tid(),
           "no syscall instruction found in the address space of thread " + std::to_string(t.recorded_tid()));
}

int64_t Replayer::inject_syscall(Task& t, long nr, const std::array<uint64_t, 6>& args, pid_t* child)
{
    uint64_t insn = find_syscall_insn(t);
    Registers saved = t.regs();
    // The task resumes afterwards as it would have: same mode, same stop kind.
    Resume saved_resume = t.last_resume;
    // Not stepped, even while the debugger single-steps the task: a step
    // from the syscall's entry would report its exit as a step's trap.
    struct Unstepped {
        Task& t;
        bool& injecting;
        bool stepping = t.single_stepping, on_resume = t.step_on_resume, was_injecting = injecting;
        Unstepped(Task& task, bool& in) : t(task), injecting(in)
        {
            t.single_stepping = t.step_on_resume = false;
            injecting = true;
        }
        ~Unstepped()
        {
            t.single_stepping = stepping;
            t.step_on_resume = on_resume;
            injecting = was_injecting;
        }
    } unstepped(t, injecting_);
    Registers r = saved;
    r[Registers::RIP] = insn;
    r[Registers::RAX] = static_cast<uint64_t>(nr);
    r[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    r[Registers::RDI] = args[0];
    r[Registers::RSI] = args[1];
    r[Registers::RDX] = args[2];
    r[Registers::R10] = args[3];
    r[Registers::R8] = args[4];
    r[Registers::R9] = args[5];
    t.set_regs(r);
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "an injected syscall");
    for (int stray = 0; stray < 4 && stray_stop(s); stray++) {
        resume(t, Resume::Syscall);
        s = wait_stop(t, "an injected syscall");
    }
    if (s.kind != StopInfo::Kind::SyscallStop || t.regs()[Registers::ORIG_RAX] != static_cast<uint64_t>(nr))
        throw ReplayError(ReplayErrorKind::Refused, current_, t.recorded_tid(),
                          "an injected " + syscall_name(static_cast<int>(nr)) +
                              " did not start: " + describe_stop(t, s));
    resume(t, Resume::Syscall);
    s = wait_stop(t, "the end of an injected syscall");
    if (s.kind == StopInfo::Kind::PtraceEvent && child) {
        *child = static_cast<pid_t>(get_event_msg(t.tid()));
        resume(t, Resume::Syscall);
        s = wait_stop(t, "the end of an injected syscall");
    }
    if (s.kind != StopInfo::Kind::SyscallStop)
        throw ReplayError(ReplayErrorKind::Refused, current_, t.recorded_tid(),
                          "an injected " + syscall_name(static_cast<int>(nr)) +
                              " did not return: " + describe_stop(t, s));
    int64_t result = static_cast<int64_t>(t.regs()[Registers::RAX]);
    t.set_regs(saved);
    // A parked sleeper (the forker of a snapshot, say) stays parked: its
    // state says Running, and unpark_sleepers() resumes it into its wait.
    t.at = is_parked(t.recorded_tid()) ? Task::At::Running : Task::At::SyscallExit;
    t.last_resume = saved_resume;
    return result;
}

void Replayer::use_huge_pages(Task& t)
{
    // fork copies page tables: 100 MiB in 4 KiB pages is 25,600 entries and
    // costs milliseconds; in 2 MiB pages, 50. Large private anonymous
    // regions are collapsed into huge pages (contents, addresses and what
    // the program can observe through its recorded syscalls are unchanged).
    // Each 2 MiB only once: a page the program writes after a snapshot is
    // split back into small pages by copy-on-write, and collapsing it again
    // copies the whole 2 MiB. A program that writes all over its heap
    // between stops paid that at every stop (about 100 ms for 30 MiB on
    // our VMs, against the 1 ms its fork saved).
    constexpr uint64_t kHuge = 2 << 20;
    std::set<uint64_t>& done = collapsed_[t.vm()->id];
    for (const auto& m : read_mappings(t.tid())) {
        bool anonymous = m.path.empty() || m.path == "[heap]";
        if (!anonymous || !private_writable(m))
            continue;
        uint64_t start = (m.start + kHuge - 1) & ~(kHuge - 1), end = m.end & ~(kHuge - 1);
        if (end <= start || end - start < 4 * kHuge)
            continue;
        // Runs of chunks not collapsed before.
        for (uint64_t a = start; a < end;) {
            if (done.count(a)) {
                a += kHuge;
                continue;
            }
            uint64_t run = a;
            while (a < end && !done.count(a))
                done.insert(a), a += kHuge;
            inject_syscall(t, SYS_madvise, {run, a - run, kMadvCollapse, 0, 0, 0});
        }
    }
}

uint64_t Replayer::copy_shared_pages(Task& t)
{
    // Each run is one injected syscall (a few ptrace stops): the largest 64;
    // the rest is copied as the run writes it. Nothing the program can see
    // changes.
    constexpr size_t kMostCalls = 64;
    uint64_t bytes = 0;
    for (const auto& [start, end] : shared_page_runs(t.tid(), kMostCalls)) {
        inject_syscall(t, SYS_madvise, {start, end - start, kMadvPopulateWrite, 0, 0, 0});
        bytes += end - start;
    }
    return bytes;
}

void Replayer::advise_forks(Task& t, const std::vector<ForkAdvice>& advice, bool keep_out)
{
    for (const ForkAdvice& a : advice) {
        std::vector<uint64_t> advices;
        if (a.wipe)
            advices.push_back(keep_out ? MADV_WIPEONFORK : MADV_KEEPONFORK);
        if (a.dont_copy)
            advices.push_back(keep_out ? MADV_DONTFORK : MADV_DOFORK);
        for (uint64_t advise : advices)
            if (int64_t r = inject_syscall(t, SYS_madvise, {a.start, a.end - a.start, advise, 0, 0, 0}); r != 0)
                throw ReplayError(ReplayErrorKind::Refused, current_, t.recorded_tid(),
                                  "cannot copy a replayed process: madvise(" + hex(a.start) + ", " +
                                      std::to_string(a.end - a.start) + ", " + std::to_string(advise) +
                                      ") failed: " + strerror(static_cast<int>(-r)));
    }
}

pid_t Replayer::fork_copy(Task& t)
{
    // Memory the process keeps out of fork children is copied all the
    // same: the advice is lifted for the fork, and given back to both.
    std::vector<ForkAdvice> advice;
    if (t.vm()->keeps_from_forks)
        advice = fork_advice(t.tid());
    advise_forks(t, advice, false);
    // A fork whose exit signal is none: killing the copy later must not
    // leave a SIGCHLD pending in the replayed process (it would interrupt
    // the next injected syscall, and is not in the recording).
    // The copy's thread keeps the address the kernel clears when it exits.
    pid_t child = 0;
    uint64_t flags = t.clear_child_tid ? CLONE_CHILD_CLEARTID : 0;
    int64_t r = inject_syscall(t, SYS_clone, {flags, 0, 0, t.clear_child_tid, 0, 0}, &child);
    // A signal came first (the kernel restarts such a fork by itself; an
    // injected one is ours to restart): once more, its stop taken first.
    for (int again = 0; r == kErestartNoIntr && again < 3; again++)
        r = inject_syscall(t, SYS_clone, {flags, 0, 0, t.clear_child_tid, 0, 0}, &child);
    if (r < 0 || child <= 0)
        throw ReplayError(ReplayErrorKind::Refused, current_, t.recorded_tid(),
                          std::string("cannot copy a replayed process: fork failed: ") +
                              strerror(static_cast<int>(-r)));
    auto first = waiter_.wait_for(child, options_.watchdog);
    if (!first || first->kind != StopInfo::Kind::GroupStop)
        throw ReplayError(ReplayErrorKind::Refused, current_, t.recorded_tid(),
                          "a copy of a replayed process did not stop after its fork");
    advise_forks(t, advice, true);
    if (!advice.empty()) {
        auto group = std::make_shared<ThreadGroup>();
        group->tgid = child;
        auto vm = std::make_shared<AddressSpace>();
        vm->syscall_insn = t.vm()->syscall_insn;
        vm->keeps_from_forks = true;
        Task copy(child, t.recorded_tid(), group, vm);
        copy.at = Task::At::EventStop;
        advise_forks(copy, advice, true);
    }
    set_registers(child, t.regs());
    return child;
}

pid_t Replayer::copy_process(Task& t)
{
    if (hook_)
        hook_->before_fork(t);
    pid_t copy = fork_copy(t);
    if (hook_)
        hook_->after_fork(t);
    return copy;
}

bool Replayer::can_snapshot(std::string* why, bool on_disk)
{
    auto fail = [&](std::string reason) {
        if (why)
            *why = std::move(reason);
        return false;
    };
    if (!launched_)
        return fail("the program has not started");
    if (in_flight_ && !restartable_)
        return fail("in the middle of replaying event " + std::to_string(current_));
    // Its int3 would be copied into the snapshot, with nobody to take it out.
    if (engine_int3_)
        return fail("the engine's breakpoint is planted at " + hex(engine_int3_));
    // Its processes map the replay's copies of files (mapped_file_copies.h),
    // which live as long as this replay.
    if (on_disk && !mapped_files_.empty())
        return fail("processes map files that change while mapped, from copies only this replay has");
    if (on_disk && !sysv_segments_.empty())
        return fail("processes attach System V segments that only this replay has");
    if (on_disk && !in_sync_call_.empty())
        return fail("thread " + std::to_string(in_sync_call_.begin()->first) + " is inside " +
                    std::string(sync_call_name(in_sync_call_.begin()->second.fn)));
    for (Task* t : live_tasks()) {
        collect_fresh(*t);
        if ((t->at == Task::At::Running && !is_parked(t->recorded_tid()) && !stable_sleeper(*t)) ||
            t->at == Task::At::ExecutingCall)
            return fail("thread " + std::to_string(t->recorded_tid()) + " is inside a syscall that runs for real");
        if (t->inject_signal)
            return fail("thread " + std::to_string(t->recorded_tid()) + " is receiving a signal");
        if (t->group().tasks.size() > 1) {
            // The copy of a process is a fork by its main thread; the
            // others are made again by clone, which cannot give them all.
            if (!find_task(t->group().recorded_tgid))
                return fail("the main thread of process " + std::to_string(t->group().recorded_tgid) +
                            " has exited while others run on");
            if (t->alt_stack && t->recorded_tid() != t->group().recorded_tgid)
                return fail("thread " + std::to_string(t->recorded_tid()) + " has an alternate signal stack");
        }
    }
    return true;
}

Task& Replayer::forker_of(ThreadGroup& group)
{
    for (Task* t : group.tasks)
        if (t->recorded_tid() == group.recorded_tgid)
            return *t;
    return *group.tasks.front(); // single-threaded: whichever it is
}

void Replayer::remake_thread(Task& forker, const ReplaySnapshot::TaskCopy& c, std::shared_ptr<ThreadGroup> group,
                             std::shared_ptr<AddressSpace> vm)
{
    // A thread of the forker's process, with no stack of its own until it
    // is given its registers: it does not run before that.
    uint64_t flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM |
                     (c.clear_child_tid ? CLONE_CHILD_CLEARTID : 0);
    pid_t tid = 0;
    int64_t r = inject_syscall(forker, SYS_clone, {flags, 0, 0, c.clear_child_tid, 0, 0}, &tid);
    if (r < 0 || tid <= 0)
        refuse(c.recorded_tid, std::string("cannot make thread ") + std::to_string(c.recorded_tid) +
                                   " of a snapshot again: clone failed: " + strerror(static_cast<int>(-r)));
    auto first = waiter_.wait_for(tid, options_.watchdog);
    if (!first || first->kind != StopInfo::Kind::GroupStop)
        refuse(c.recorded_tid, "thread " + std::to_string(c.recorded_tid) + " of a snapshot did not stop once made");
    Task& t = add_task(tid, c.recorded_tid, std::move(group), std::move(vm));
    t.set_regs(c.regs);
    write_thread_state(tid, c.state);
    if (c.state.robust_head)
        inject_syscall(t, SYS_set_robust_list, {c.state.robust_head, c.state.robust_len, 0, 0, 0, 0});
    t.at = Task::At::EventStop; // as it was: resuming goes on from its registers
}

std::unique_ptr<ReplaySnapshot> Replayer::take_snapshot(bool huge_pages)
{
    std::string why;
    if (!can_snapshot(&why))
        throw ReplayError(ReplayErrorKind::Refused, current_, 0, "cannot take a snapshot here: " + why);
    // Threads asleep in a futex are copied stopped, about to wait again.
    struct Unpark {
        Replayer& r;
        std::vector<Tid> sleepers;
        ~Unpark() noexcept(false)
        {
            if (std::uncaught_exceptions() == 0)
                r.unpark_sleepers(sleepers);
        }
    } unpark{*this, park_sleepers()};
    auto snap = std::make_unique<ReplaySnapshot>(waiter_);
    std::map<const ThreadGroup*, size_t> groups;
    std::map<const AddressSpace*, size_t> vms;
    for (Task* live : live_tasks()) {
        auto [git, gnew] = groups.try_emplace(&live->group(), snap->groups.size());
        if (!gnew)
            continue;
        ThreadGroup& group = live->group();
        snap->groups.push_back({group.recorded_tgid, *group.fds});
        // The forker first: restoring makes the others from its copy.
        std::vector<Task*> members{&forker_of(group)};
        for (Task* t : group.tasks)
            if (t != members.front())
                members.push_back(t);
        for (Task* t : members) {
            auto [vit, vnew] = vms.try_emplace(t->vm().get(), snap->vms.size());
            if (vnew)
                snap->vms.push_back({t->vm()->id, t->vm()->syscall_insn, t->vm()->keeps_from_forks});
            ReplaySnapshot::TaskCopy copy{t->recorded_tid(),
                                          0,
                                          t->regs(),
                                          {},
                                          git->second,
                                          vit->second,
                                          t->last_syscall_seq,
                                          t->vfork_child,
                                          t->last_resume,
                                          t->child_settid,
                                          t->child_settid_value,
                                          t->clear_child_tid,
                                          t->alt_stack,
                                          is_parked(t->recorded_tid()),
                                          t->own_fds ? std::optional<StdioFds>(*t->own_fds) : std::nullopt};
            if (t == members.front()) {
                if (hook_)
                    hook_->before_fork(*t);
                if (vnew && huge_pages)
                    use_huge_pages(*t);
                copy.pid = fork_copy(*t);
                if (hook_)
                    hook_->after_fork(*t);
            } else {
                copy.state = read_thread_state(t->tid());
            }
            snap->tasks.push_back(std::move(copy));
            snap->vms[vit->second].syscall_insn = t->vm()->syscall_insn;
        }
    }
    snap->finished = finished_;
    snap->sync_calls = in_sync_call_;
    snap->last_events = last_events_;
    // In the middle of an event: restoring replays it again from its start.
    snap->source = in_flight_ ? source_.checkpoint_before(current_) : source_.checkpoint();
    snap->initial_tid = initial_tid_;
    snap->next_vm_id = next_vm_id_;
    snap->warned_unechoed = warned_unechoed_;
    snap->mounts = mounted_;
    snap->mapped_files = mapped_files_.save();
    snap->shared_memory = SharedMemory::save(live_processes());
    snap->sysv_ids = sysv_segments_.ids();
    return snap;
}

void Replayer::restore_process_settings(Task& t)
{
    // What the launch set (launcher.cpp) and CRIU does not give back: the
    // rdtsc trap, and no address randomization for the execs to come.
    if (int64_t r = inject_syscall(t, SYS_prctl, {PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0, 0}); r != 0)
        refuse(t.recorded_tid(),
               std::string("cannot trap rdtsc in a restored process again: ") + strerror(static_cast<int>(-r)));
    int64_t persona = inject_syscall(t, SYS_personality, {0xffffffff, 0, 0, 0, 0, 0});
    if (persona < 0 ||
        inject_syscall(t, SYS_personality, {static_cast<uint64_t>(persona) | ADDR_NO_RANDOMIZE, 0, 0, 0, 0, 0}) < 0)
        refuse(t.recorded_tid(), "cannot turn address randomization off in a restored process");
    t.at = Task::At::EventStop; // as restored: not in a syscall of its own
}

void Replayer::kill_world()
{
    for (Task* t : live_tasks()) {
        ::kill(t->tid(), SIGKILL);
        for (;;) {
            auto s = waiter_.wait_for(t->tid(), options_.watchdog);
            if (!s || s->kind == StopInfo::Kind::Exited || s->kind == StopInfo::Kind::Signaled)
                break;
        }
        remove_task(*t);
    }
    tasks_.clear();
    retired_.clear();
    zombie_leaders_.clear(); // a copy's process is led by the thread that forked it
}

void Replayer::restore(const ReplaySnapshot& snap)
{
    forget_notified_run(); // its thread is killed with the rest
    kill_world();
    mapped_files_.restore(snap.mapped_files);
    std::vector<std::shared_ptr<ThreadGroup>> groups;
    for (const auto& g : snap.groups) {
        auto group = std::make_shared<ThreadGroup>();
        group->recorded_tgid = g.recorded_tgid;
        group->fds = std::make_shared<StdioFds>(g.fds);
        groups.push_back(group);
    }
    std::vector<std::shared_ptr<AddressSpace>> vms;
    for (const auto& v : snap.vms) {
        auto vm = std::make_shared<AddressSpace>();
        vm->id = v.id;
        vm->syscall_insn = v.syscall_insn;
        vm->keeps_from_forks = v.keeps_from_forks;
        vms.push_back(vm);
    }
    std::map<size_t, Task*> forkers; // by group
    for (const auto& c : snap.tasks) {
        if (c.pid) {
            // The snapshot's copy stays pristine: the live process is a fork of it.
            auto scratch_group = std::make_shared<ThreadGroup>();
            scratch_group->tgid = c.pid;
            auto scratch_vm = std::make_shared<AddressSpace>();
            scratch_vm->syscall_insn = vms[c.vm]->syscall_insn;
            scratch_vm->keeps_from_forks = vms[c.vm]->keeps_from_forks;
            Task source(c.pid, c.recorded_tid, scratch_group, scratch_vm);
            source.at = Task::At::EventStop;
            source.clear_child_tid = c.clear_child_tid;
            pid_t live = fork_copy(source);
            Task& t = add_task(live, c.recorded_tid, groups[c.group], vms[c.vm]);
            t.at = Task::At::EventStop;
            groups[c.group]->tgid = live;
            forkers[c.group] = &t;
            // Before its other threads are made: they inherit both.
            if (snap.restored_by_criu)
                restore_process_settings(t);
        } else {
            remake_thread(*forkers.at(c.group), c, groups[c.group], vms[c.vm]);
        }
        Task& t = *find_task(c.recorded_tid);
        t.last_syscall_seq = c.last_syscall_seq;
        t.vfork_child = c.vfork_child;
        t.child_settid = c.child_settid;
        t.child_settid_value = c.child_settid_value;
        if (c.own_fds)
            t.own_fds = std::make_shared<StdioFds>(*c.own_fds);
        t.clear_child_tid = c.clear_child_tid;
        t.alt_stack = c.alt_stack;
        t.last_resume = c.last_resume;
    }
    finished_ = snap.finished;
    in_sync_call_ = snap.sync_calls;
    last_events_ = snap.last_events;
    parked_.clear();
    held_out_.clear();
    std::vector<Tid> asleep;
    for (const auto& c : snap.tasks)
        if (c.asleep) {
            find_task(c.recorded_tid)->at = Task::At::Running;
            parked_.push_back({c.recorded_tid});
            asleep.push_back(c.recorded_tid);
        }
    source_.restore(snap.source);
    initial_tid_ = snap.initial_tid;
    next_vm_id_ = snap.next_vm_id;
    warned_unechoed_ = snap.warned_unechoed;
    mounted_ = snap.mounts;
    snap.shared_memory.restore(live_processes());
    sysv_segments_.restore_ids(snap.sysv_ids);
    launched_ = true; // (a landmark may be restored into a replay that had not started)
    current_ = snap.next_event();
    in_flight_ = false;
    restartable_ = false;
    interrupt_deadline_.reset();
    interrupt_delay_.reset();
    interrupt_sent_ = false;
    unpark_sleepers(asleep); // back into their waits
}

} // namespace rw::replay
