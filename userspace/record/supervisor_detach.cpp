// The end of a recording of a process rewind attached to: the process runs
// on as if rewind had never been there. The kernel side stops capturing its
// threads first (no event, no stall after that point); each thread is then
// stopped, put back out of any syscall it is in (it makes the call again
// when it runs), and given back what the recording changed; signals the
// supervisor held (deferred to a syscall boundary, or parked with a thread
// waiting for its turn) are delivered once it is let go.
#include <sys/ptrace.h>
#include <sys/rseq.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <set>

#include "attach.h"
#include "bpf_capture.h"
#include "process_image.h"
#include "emulated_tracing.h"
#include "random_sites.h"
#include "syscall_table.h"
#include "thread_injector.h"
#include "supervisor.h"
#include "tracee.h"
#include "tsc.h"

namespace rw {

void Supervisor::adopt_tree(const std::vector<std::pair<Tid, std::vector<Tid>>>& processes,
                            const std::vector<std::pair<Tid, FileIdentity>>& shared)
{
    initial_ = processes.front().first;
    // Nothing runs yet: the groups are made, not merged.
    for (const auto& [tgid, object] : shared)
        groups_.mapped_shared(tgid, object);
    std::map<Tid, std::vector<Tid>> by_key;
    std::vector<Tid> keys;
    for (const auto& [tgid, tids] : processes) {
        Tid k = groups_.key_of(tgid);
        if (!by_key.contains(k))
            keys.push_back(k);
        by_key[k].insert(by_key[k].end(), tids.begin(), tids.end());
        for (Tid tid : tids)
            thread(tid).started = true;
    }
    // Like a process whose second thread has just started: one runs, the
    // others wait for their turn where they stand.
    for (Tid k : keys) {
        const auto& tids = by_key[k];
        if (tids.size() > 1)
            serialize(k, tids.front());
        for (Tid tid : tids) {
            Thread& t = thread(tid);
            if (tid == tids.front() || !serialized(t))
                resume(t, 0);
            else
                want_cpu(t);
        }
    }
}

bool Supervisor::own_trap(Thread& t, int signo)
{
    // An rdtsc the trap stopped: it runs again once let go (for real after
    // a detach, trapped again after a start image). Not a signal to give.
    if (signo == SIGSEGV)
        return decode_tsc_instruction(TraceeMemory(t.tid), get_registers(t.tid)[Registers::RIP]).has_value();
    // One of rewind's int3s: the thread goes back to the instruction it
    // stands for, which runs again (once the int3 is out, or trapped again).
    if (signo == SIGTRAP) {
        Registers regs = get_registers(t.tid);
        if (!random_sites_.at(t.tgid, regs[Registers::RIP] - 1))
            return false;
        regs[Registers::RIP] -= 1;
        set_registers(t.tid, regs);
        return true;
    }
    return false;
}

bool Supervisor::stop_for_detach(Thread& t, std::vector<std::pair<Tid, int>>& later)
{
    bool stopped = in_ptrace_stop(t.tid) && !t.listening;
    if (!stopped && ::ptrace(PTRACE_INTERRUPT, t.tid, nullptr, nullptr) != 0)
        return false;
    for (;;) {
        int status = 0;
        // A stop already reported is handled; one the kernel has queued
        // is taken too, so that its signal is not lost.
        pid_t r = waitpid(t.tid, &status, __WALL | (stopped ? WNOHANG : 0));
        if (r == 0)
            break;
        if (r < 0)
            return false;
        StopInfo s = decode_wait_status(status);
        if (s.kind == StopInfo::Kind::Exited || s.kind == StopInfo::Kind::Signaled)
            return false;
        if (s.kind != StopInfo::Kind::SignalDelivery) {
            // The kernel side's stall signal, sent at a call's exit, can be
            // pending still: the interrupt stopped the thread first. Let go
            // with it, it would stop the whole process (a SIGSTOP); the
            // thread takes it now, no code of its own run, and it is not
            // delivered (the detach gives no signal).
            if ((thread_signal_mask(t.tid, "SigPnd") & (1ull << (RW_STALL_SIGNAL - 1))) && capture_.has_stall(t.tid) &&
                ::ptrace(PTRACE_CONT, t.tid, nullptr, nullptr) == 0) {
                stopped = false;
                continue;
            }
            break;
        }
        std::optional<rw_stall> stall = s.signal == RW_STALL_SIGNAL ? capture_.take_stall(t.tid) : std::nullopt;
        if (!stall && !own_trap(t, s.signal))
            later.push_back({t.tid, s.signal});
        else if (stall->reason != RW_STALL_TURN)
            // A call whose event the supervisor completes at such a stop (a
            // file to copy, memory the kernel side could not read, the
            // program's view of a call): completed as while recording; the
            // thread stays stopped (detaching_).
            on_stall(t, *stall);
        break;
    }
    return true;
}

void Supervisor::refuse_rseq(Thread& t, rw_rec_syscall& sc)
{
    if (sc.args[2] & RSEQ_FLAG_UNREGISTER)
        return;
    std::vector<int> arrived;
    capture_.unrecorded(t.tid, [&] {
        ThreadInjector in(t.tid, find_syscall_instruction(t.tgid));
        in.call(SYS_rseq, sc.args[0], sc.args[1], RSEQ_FLAG_UNREGISTER, sc.args[3]);
        arrived = in.arrived();
    });
    sc.ret = -ENOSYS;
    if (rseq_owed_.erase(t.tid)) {
        sc.ret = 0;
        if (options_.rseq_answered)
            options_.rseq_answered(t.tid, sc.args[0], static_cast<uint32_t>(sc.args[1]),
                                   static_cast<uint32_t>(sc.args[3]));
    }
    Registers regs = get_registers(t.tid);
    regs[Registers::RAX] = static_cast<uint64_t>(sc.ret);
    set_registers(t.tid, regs);
    for (int sig : arrived)
        ::syscall(SYS_tgkill, t.tgid, t.tid, sig);
}

namespace {

// The child a thread stopped at a clone's or fork's event has just made;
// `vfork` says whether the call was a vfork.
std::optional<pid_t> child_at_clone_event(pid_t tid, bool* vfork = nullptr)
{
    siginfo_t si{};
    if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0 || si.si_signo != SIGTRAP)
        return std::nullopt;
    int event = si.si_code >> 8;
    if (event != PTRACE_EVENT_CLONE && event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK)
        return std::nullopt;
    unsigned long child = get_event_msg(tid);
    if (child == 0)
        return std::nullopt;
    if (vfork)
        *vfork = event == PTRACE_EVENT_VFORK;
    return static_cast<pid_t>(child);
}

// Takes the first stop of a thread or process ptrace took at its clone or
// fork (it comes at once; one that is gone, or not rewind's, is let be).
bool stop_newcomer(pid_t tid)
{
    return stops_within(tid, std::chrono::seconds(2));
}

} // namespace

void Supervisor::let_go(std::vector<pid_t> stopped, const std::map<pid_t, Tid>& tgid_of)
{
    // One that cannot be put back (gone, or stopped where it cannot be)
    // is let go all the same: a thread left traced would stop for ever.
    std::vector<pid_t> unrestored;
    std::erase_if(stopped, [&](pid_t tid) {
        if (put_before_syscall(tid))
            return false;
        unrestored.push_back(tid);
        return true;
    });
    if (options_.undo_attach)
        for (auto& p : options_.undo_attach(stopped))
            problems_.push_back("detaching: " + p);
    std::set<Tid> processes;
    for (pid_t tid : stopped)
        if (processes.insert(tgid_of.at(tid)).second && !random_sites_.unplant(tgid_of.at(tid), tid))
            problems_.push_back("detaching: cannot take rewind's int3s out of process " +
                                std::to_string(tgid_of.at(tid)));
    for (pid_t tid : stopped)
        ::ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    for (pid_t tid : unrestored)
        if (::ptrace(PTRACE_DETACH, tid, nullptr, nullptr) == 0)
            problems_.push_back("detaching: thread " + std::to_string(tid) +
                                " could not be taken out of its call, nor given back its rdtsc mode");
}

Supervisor::Stopped Supervisor::stop_everything()
{
    detaching_ = true;
    Stopped all;
    std::vector<Tid> tids;
    for (const auto& [tid, t] : threads_)
        tids.push_back(tid);
    for (Tid tid : tids) {
        Thread& t = threads_.at(tid);
        t.signal_probe.reset(); // its hardware breakpoints go with it
        t.probe.reset();
        for (const siginfo_t& si : t.deferred)
            all.later.push_back({tid, si.si_signo});
        if (t.parked_status) {
            // (The thread still stands at that stop.)
            StopInfo s = decode_wait_status(*t.parked_status);
            if (s.kind == StopInfo::Kind::SignalDelivery && s.signal != RW_STALL_SIGNAL && !own_trap(t, s.signal))
                all.later.push_back({tid, s.signal});
        }
        if (t.parked_signal)
            all.later.push_back({tid, t.parked_signal});
        if (!stop_for_detach(t, all.later))
            continue;
        all.threads.push_back(tid);
        all.tgid_of[tid] = t.tgid;
        all.processes.insert(t.tgid);
    }
    // Threads and processes a clone or fork made while the others were
    // being stopped are in no list: ptrace holds them at their first stop,
    // with the rdtsc trap they inherited.
    std::vector<pid_t> born;
    for (pid_t tid : all.threads) {
        bool vfork = false;
        if (auto child = child_at_clone_event(tid, &vfork)) {
            born.push_back(*child);
            if (vfork)
                all.vforked.insert(*child);
        }
    }
    for (Tid tgid : all.processes)
        for (pid_t tid : task_ids(tgid))
            born.push_back(tid);
    for (pid_t tid : born) {
        if (tid <= 0 || all.tgid_of.count(tid) || threads_.count(tid) || !stop_newcomer(tid))
            continue;
        auto tgid = static_cast<Tid>(proc_status_number(tid, "Tgid").value_or(tid));
        all.threads.push_back(tid);
        all.newcomers.push_back(tid);
        all.tgid_of[tid] = tgid;
        all.processes.insert(tgid);
    }
    return all;
}

void Supervisor::detach_all()
{
    // Every thread is stopped while the capture still records it: a call
    // it was in ends (interrupted, to be made again after the detach), and
    // that end fills the place the stream reserved for it at its entry, so
    // that replay runs the thread up to that call as the recording did.
    // Newcomers are given back as the others are (else they would run on
    // trapped, and die at their first clock_gettime).
    Stopped all = stop_everything();
    std::vector<pid_t> stopped = all.threads;
    drain_ring();
    // A vfork's child goes first: its parent, taken to its call's exit,
    // waits there until the child has exec'd or exited.
    std::vector<pid_t> children;
    std::erase_if(stopped, [&](pid_t tid) {
        if (!all.vforked.count(tid))
            return false;
        children.push_back(tid);
        return true;
    });
    for (pid_t tid : children)
        capture_.untrack(tid);
    let_go(children, all.tgid_of);
    // A thread at a clone's or fork's event is taken to the call's exit
    // while it is still recorded: the new task's first events can be in
    // the stream already, and the call that made it must end there too.
    // (A vfork's end may have brought the kernel side's stall signal: taken
    // as when the thread was first stopped.)
    for (pid_t tid : stopped) {
        if (!child_at_clone_event(tid) || !put_before_syscall(tid))
            continue;
        auto t = threads_.find(tid);
        if (t != threads_.end() && (thread_signal_mask(tid, "SigPnd") & (1ull << (RW_STALL_SIGNAL - 1))) &&
            ::ptrace(PTRACE_CONT, tid, nullptr, nullptr) == 0)
            stop_for_detach(t->second, all.later);
    }
    drain_ring();
    for (const auto& [tid, t] : threads_)
        capture_.untrack(tid);
    for (pid_t tid : stopped)
        capture_.untrack(tid);
    drain_ring();
    let_go(stopped, all.tgid_of);
    for (auto [tid, sig] : all.later) {
        auto it = threads_.find(tid);
        ::syscall(SYS_tgkill, it != threads_.end() ? it->second.tgid : tid, tid, sig);
    }
    for (Tid tgid : all.processes)
        unserialize(groups_.key_of(tgid));
    threads_.clear();
    detached_ = true;
}

} // namespace rw
