// The syscall agent (syscall_agent.h) inside runs of syscalls served by
// seccomp notification (replay_notified.cpp).
//
// When the replayer answers a notified call, it loads the agent's ring
// with the calls the thread makes after it that the notification path
// would serve too, and the thread answers them itself; the first call it
// does not answer (the ring ran out, or it is not the recorded one) is
// notified as before. Then the replayer reads how many the agent
// answered, and the events of those calls are replayed without touching
// the thread: their bookkeeping only (after_syscall), in order, as if
// each had been notified. A stop that comes meanwhile (a breakpoint, a
// signal) is taken after them, at the event the thread had reached.
//
// Not where a debugger watches memory (the agent's writes would trap in
// its watchpoints), nor at a site with a debugger's trap on the bytes it
// would patch or skip. A stop inside the agent's code is a fault (a
// divergence: the recorded buffers are not mapped as they were), or a
// signal (the replayer's interrupt to look for the debugger, one from
// outside), after which the thread first finishes its answer.
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include <algorithm>
#include <optional>

#include "debug_log.h"
#include "remote_syscall.h"
#include "replayer.h"
#include "steady_now.h"
#include "syscall_agent.h"
#include "syscall_restart.h"
#include "text.h"

namespace rw::replay {
namespace {

// Calls put in the ring at a time (its size bounds them too): a run
// reaches the replayer at least this often, to check its deadline.
constexpr size_t kAgentBatch = 4096;

bool fault_signal(int signo)
{
    return signo == SIGSEGV || signo == SIGBUS || signo == SIGILL || signo == SIGFPE || signo == SIGTRAP;
}

} // namespace

bool Replayer::agent_allowed()
{
    // With a debugger's traps set, only where none watches memory: the
    // agent's writes of a call's output would trap in it.
    return options_.syscall_agent && (through_untrapped_ || (hook_ && !hook_->watches_memory()));
}

void Replayer::prepare_agent(Task& t, const SyscallEvent& e)
{
    AddressSpace& vm = *t.vm();
    if (!agent_allowed() || vm.agent || vm.agent_tried || e.ip < 2)
        return;
    vm.agent_tried = true;
    std::string why;
    auto agent = SyscallAgent::map_into(
        t.tid(), e.ip - 2, [&](long nr, const std::array<uint64_t, 6>& args) { return inject_syscall(t, nr, args); },
        why);
    if (!agent) {
        debug_log("replay: no syscall agent in process %d: %s", t.group().recorded_tgid, why.c_str());
        return;
    }
    vm.agent = std::move(agent);
}

void Replayer::load_agent(Task& t)
{
    SyscallAgent* agent = t.vm()->agent.get();
    if (!agent || !agent_allowed() || coarse_now() >= through_deadline_)
        return;
    SyscallAgent::Trapped trapped;
    if (!through_untrapped_)
        trapped = [&](uint64_t start, uint64_t end) { return hook_->traps_code(t, start, end); };
    // The calls after this one that the notification path would serve,
    // each followed by another such call of the thread (may_serve_by_notification),
    // and all in the order of the recording: where the stream has taken an
    // event out of order (a vfork child's exec, before its parent's
    // return), the replay may take others so, and the run stops there.
    std::vector<const SyscallEvent*> calls;
    const IndexedEvent* next = source_.peek_ahead(0);
    for (size_t i = 0; calls.size() < kAgentBatch && current_ + 1 + i < through_last_; i++) {
        if (!next || next->index != current_ + 1 + i)
            break;
        const auto* call = std::get_if<SyscallEvent>(&next->event);
        if (!call || call->tid != t.recorded_tid() || !notified_call(*call) || restarts(call->ret) ||
            !agent->can_serve(t.tid(), *call, trapped))
            break;
        next = source_.peek_ahead(i + 1);
        const auto* after = next ? std::get_if<SyscallEvent>(&next->event) : nullptr;
        if (!after || after->tid != call->tid || !notified_call(*after) || next->index != current_ + 2 + i)
            break;
        calls.push_back(call);
    }
    if (!calls.empty())
        agent->load(t.tid(), calls);
}

StopWaiter::Arrival Replayer::run_arrival(Task& t)
{
    if (agent_arrival_) {
        auto arrival = std::move(*agent_arrival_);
        agent_arrival_.reset();
        return arrival;
    }
    auto arrival = wait_call_or_stop(t);
    SyscallAgent* agent = t.vm()->agent.get();
    if (!agent || !agent->loaded())
        return arrival;
    if (arrival.stop &&
        (arrival.stop->kind == StopInfo::Kind::SignalDelivery || arrival.stop->kind == StopInfo::Kind::GroupStop) &&
        agent->in_code(t.regs()[Registers::RIP]))
        finish_agent_answer(t, *arrival.stop);
    uint32_t answered = agent->collect(t.tid());
    if (answered) {
        agent_until_ = current_ + answered;
        agent_arrival_ = std::move(arrival);
        return {};
    }
    return arrival;
}

void Replayer::finish_agent_answer(Task& t, const StopInfo& s)
{
    SyscallAgent& agent = *t.vm()->agent;
    uint64_t rip = t.regs()[Registers::RIP];
    if (s.kind == StopInfo::Kind::SignalDelivery && fault_signal(s.signal)) {
        agent.unpatch(t.tid());
        diverge(t, "the recorded call of event " + std::to_string(current_ + agent.collect(t.tid())) +
                       " cannot be made as recorded: " + signal_name(s.signal) + " where rewind's syscall agent " +
                       (rip < agent.base() + 0x1000 ? "checks its input or writes its output" : "enters") +
                       " (its buffers are not mapped as in the recording)");
    }
    // Elsewhere, it finishes its answer first: to the agent's one way out,
    // where an int3 stops it, then where that jump goes (rcx).
    TraceeMemory mem = t.memory();
    uint8_t int3 = 0xcc, exit_bytes[2];
    if (!mem.read(RemoteAddr(agent.exit_address()), exit_bytes) ||
        !mem.write_code(RemoteAddr(agent.exit_address()), {&int3, 1}))
        diverge(t, "cannot reach the syscall agent's code in the replayed process");
    // More signals from outside may come (or be pending already) before
    // it gets there: each is a stop like the first, not delivered.
    auto deadline = steady_now() + options_.watchdog;
    std::optional<StopInfo> stop;
    for (;;) {
        resume(t, Resume::Cont);
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_now());
        stop = waiter_.wait_for(t.tid(), std::max(left, std::chrono::milliseconds(1)));
        bool another_signal =
            stop &&
            ((stop->kind == StopInfo::Kind::SignalDelivery && stop->signal != SIGTRAP && !fault_signal(stop->signal)) ||
             stop->kind == StopInfo::Kind::GroupStop);
        if (!another_signal || steady_now() >= deadline)
            break;
    }
    mem.write_code(RemoteAddr(agent.exit_address()), exit_bytes);
    if (!stop || stop->kind != StopInfo::Kind::SignalDelivery || stop->signal != SIGTRAP ||
        t.regs()[Registers::RIP] != agent.exit_address() + 1)
        diverge(
            t, "the thread did not leave rewind's syscall agent after " + signal_name(s.signal) + " stopped it there" +
                   (stop ? ": it stopped again by " + signal_name(stop->signal) + " at " + hex(t.regs()[Registers::RIP])
                         : ": it did not stop within the watchdog's time"));
    Registers r = t.regs();
    r[Registers::RIP] = r[Registers::RCX];
    t.set_regs(r);
    t.reblock_sigtrap();
    debug_log("replay: %s stopped thread %d in the syscall agent: its answer finished first",
              signal_name(s.signal).c_str(), t.recorded_tid());
}

void Replayer::retire_agent(Task& t)
{
    SyscallAgent* agent = t.vm()->agent.get();
    if (!agent || (!agent->patched() && !agent->loaded()))
        return;
    for (Task* any : t.vm()->tasks) {
        if (any->at == Task::At::Gone)
            continue;
        agent->collect(any->tid());
        if (agent->unpatch(any->tid()))
            return;
    }
}

void Replayer::keep_agent_clear(Task& t, const SyscallEvent& e)
{
    AddressSpace& vm = *t.vm();
    if (!vm.agent || e.ret < 0)
        return;
    uint64_t base = vm.agent->base();
    bool in_the_way = false, for_good = false;
    auto overlaps = [&](uint64_t start, uint64_t length) {
        return start < base + SyscallAgent::size() && start + length > base;
    };
    if (e.nr == SYS_mmap)
        in_the_way = overlaps(static_cast<uint64_t>(e.ret), e.args[1]);
    else if (e.nr == SYS_mremap)
        in_the_way = overlaps(static_cast<uint64_t>(e.ret), e.args[2]);
    else if (e.nr == SYS_shmat) {
        struct shmid_ds ds {};
        auto real = sysv_segments_.real_id(static_cast<int64_t>(e.args[0]));
        in_the_way =
            !real || ::shmctl(*real, IPC_STAT, &ds) != 0 || overlaps(static_cast<uint64_t>(e.ret), ds.shm_segsz);
    } else if ((e.nr == SYS_setrlimit && e.args[0] == RLIMIT_DATA) ||
               (e.nr == SYS_prlimit64 && e.args[1] == RLIMIT_DATA && e.args[2])) {
        // The agent's memory would count against the program's data limit.
        in_the_way = for_good = true;
    }
    if (!in_the_way)
        return;
    retire_agent(t);
    {
        OwnCalls own(injecting_);
        RemoteSyscalls remote(t, waiter_, [this, &t](const StopInfo& s) { return defer_own_interrupt(t, s); });
        remote.call(SYS_munmap, base, SyscallAgent::size());
        remote.enter_original();
    }
    vm.agent.reset();
    vm.agent_tried = for_good;
    debug_log("replay: the syscall agent at %#llx gave way to %s", (unsigned long long)base,
              syscall_name(e.nr).c_str());
}

} // namespace rw::replay
