// The supervisor's side of processes that share memory (memory_groups.h):
// it learns who shares what (a fork, a MAP_SHARED mapping the kernel side
// stops the thread after), and runs each group's threads one at a time,
// as it runs the threads of one process (supervisor_threads.cpp).
#include <sched.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <cstring>

#include "bpf_capture.h"
#include "mapped_files.h"
#include "process_image.h"
#include "supervisor.h"
#include "syscall_table.h"
#include "tracee.h"

namespace rw {
namespace {

using Clock = std::chrono::steady_clock;

// The clone flags of the call a fork event stops `tid` in.
uint64_t clone_flags_of(pid_t tid)
{
    Registers r = get_registers(tid);
    switch (static_cast<int64_t>(r[Registers::ORIG_RAX])) {
    case SYS_clone:
        return r[Registers::RDI];
    case SYS_clone3: {
        uint64_t flags = 0; // struct clone_args begins with them
        TraceeMemory(tid).read(RemoteAddr(r[Registers::RDI]), {reinterpret_cast<uint8_t*>(&flags), sizeof flags});
        return flags;
    }
    default:
        return 0; // fork, vfork
    }
}

} // namespace

bool is_shared_mapping_call(const rw_rec_syscall& sc)
{
    const SyscallInfo* info = find_syscall(sc.nr);
    return info && rw_shares_memory(&info->spec, sc.ret, sc.args[3]);
}

void Supervisor::note_shared_mapping(Thread& t, const rw_rec_syscall& sc)
{
    // No device number is all ones: a System V segment is known by its id.
    constexpr uint64_t kSysvSegments = ~uint64_t(0);
    std::optional<FileIdentity> file;
    if (sc.h.flags & RW_SC_FILE)
        file = FileIdentity{kernel_dev_to_user(sc.file.dev), sc.file.ino};
    else if (sc.nr == SYS_shmat)
        file = FileIdentity{kSysvSegments, sc.args[0]};
    merge_schedules(groups_.mapped_shared(t.tgid, file), t);
}

void Supervisor::on_fork_event(Thread& parent, Thread& child, int event)
{
    std::vector<MemoryGroups::Merge> merges;
    // A vfork child runs while its parent waits for its exec or exit.
    if (event != PTRACE_EVENT_VFORK && !options_.parallel)
        merges = groups_.forked(parent.tgid, child.tgid, clone_flags_of(parent.tid) & CLONE_VM);
    merge_schedules(merges, parent, held_children_.contains(child.tid) ? nullptr : &child);
    bool joined = key(child) != child.tgid;
    auto held = held_children_.find(child.tid);
    if (held == held_children_.end()) {
        forks_seen_[child.tid] = joined; // its first stop is still to come
        return;
    }
    held_children_.erase(held);
    start_child(child, joined);
}

bool Supervisor::hold_new_child(Thread& t)
{
    // A new process's first stop: whether it runs freely or waits for its
    // group's CPU is known from its parent's fork event.
    if (auto seen = forks_seen_.find(t.tid); seen != forks_seen_.end()) {
        bool joined = seen->second;
        forks_seen_.erase(seen);
        start_child(t, joined);
        return true;
    }
    auto parent = proc_status_number(t.tid, "PPid");
    if (!parent || !threads_.contains(static_cast<Tid>(*parent)))
        return false; // not forked by a recorded process we wait to hear from
    held_children_[t.tid] = static_cast<Tid>(*parent);
    return true;
}

void Supervisor::start_child(Thread& t, bool joined)
{
    if (birth_stop_for_tracer(t))
        return;
    if (joined)
        want_cpu(t);
    else
        resume(t, 0);
}

void Supervisor::release_children_of(Tid parent)
{
    // Its fork event will not come (it died first): they run as they are.
    for (auto it = held_children_.begin(); it != held_children_.end();) {
        if (it->second != parent) {
            ++it;
            continue;
        }
        Tid child = it->first;
        it = held_children_.erase(it);
        if (auto c = threads_.find(child); c != threads_.end())
            start_child(c->second, key(c->second) != c->second.tgid);
    }
}

Supervisor::Thread* Supervisor::lone_thread(const std::vector<Tid>& processes, const Thread* not_started)
{
    Thread* found = nullptr;
    for (auto& [tid, th] : threads_)
        for (Tid p : processes)
            if (th.tgid == p && &th != not_started) {
                if (found)
                    return nullptr;
                found = &th;
            }
    return found;
}

void Supervisor::merge_schedules(const std::vector<MemoryGroups::Merge>& merges, Thread& stopped,
                                 const Thread* not_started)
{
    auto now = Clock::now();
    for (const auto& m : merges) {
        std::vector<Tid> into_processes;
        for (Tid p : groups_.members(m.into))
            if (std::find(m.processes.begin(), m.processes.end(), p) == m.processes.end())
                into_processes.push_back(p);
        bool stopped_from = std::find(m.processes.begin(), m.processes.end(), stopped.tgid) != m.processes.end();
        // A key not serialized yet has one thread (it runs, or it is the
        // stopped one): it holds that key's CPU.
        for (auto [k, procs] : {std::pair<Tid, const std::vector<Tid>*>{m.from, &m.processes},
                                std::pair<Tid, const std::vector<Tid>*>{m.into, &into_processes}})
            if (!scheduler_.serialized(k))
                if (Thread* lone = lone_thread(*procs, not_started))
                    scheduler_.serialize(k, lone->tid, now);
        if (!scheduler_.serialized(m.from)) {
            // Nothing runs under it yet (a fork child before its first stop).
        } else if (!scheduler_.serialized(m.into)) {
            scheduler_.merge(m.from, m.into, *scheduler_.running(m.from), now);
        } else {
            // One CPU for both: the side that was running on keeps it; the
            // stopped thread, which made the call, waits its turn.
            auto other = scheduler_.running(stopped_from ? m.into : m.from);
            Tid runner = other ? *other : stopped.tid;
            if (runner != stopped.tid)
                stopped.out_of_turn = true;
            scheduler_.merge(m.from, m.into, runner, now);
        }
        mark_serialized(m.into);
    }
}

void Supervisor::mark_serialized(Tid key)
{
    if (!scheduler_.serialized(key))
        return;
    for (Tid tgid : groups_.members(key))
        if (tgid > 0)
            capture_.set_serialized(tgid, true, options_.chaos);
}

} // namespace rw
