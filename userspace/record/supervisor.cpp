#include "supervisor.h"

#include <sys/epoll.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <elf.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>
#include <set>
#include <utility>
#include <system_error>

#include "bpf_capture.h"
#include "event_assembler.h"
#include "init_signals.h"
#include "mapped_files.h"
#include "page_digest.h"
#include "process_image.h"
#include "program_view.h"
#include "random_sites.h"
#include "syscall_memory.h"
#include "syscall_table.h"
#include "tracee.h"
#include "tsc.h"
#include "unique_fd.h"
#include "vdso.h"

namespace rw {
namespace {

using Clock = std::chrono::steady_clock;

Tid read_tgid(Tid tid)
{
    return static_cast<Tid>(proc_status_number(tid, "Tgid").value_or(tid));
}

bool is_fault(int signo, const siginfo_t& si)
{
    switch (signo) {
    case SIGSEGV:
    case SIGBUS:
    case SIGILL:
    case SIGFPE:
    case SIGTRAP:
        return si.si_code > 0; // raised by the CPU / kernel, not sent by someone
    default:
        return false;
    }
}

} // namespace

Supervisor::Supervisor(BpfCapture& capture, EventAssembler& assembler, EventSink& sink, MappedFiles& files,
                       RandomSites& random_sites, const Options& options)
    : capture_(capture), assembler_(assembler), sink_(sink), files_(files), random_sites_(random_sites),
      options_(options), scheduler_(options.time_slice, options.chaos)
{}

Supervisor::Thread& Supervisor::thread(Tid tid, std::optional<Tid> tgid)
{
    auto [it, inserted] = threads_.try_emplace(tid);
    if (inserted) {
        it->second.tid = tid;
        it->second.tgid = tgid ? *tgid : read_tgid(tid);
    }
    return it->second;
}

void Supervisor::emit(Event event)
{
    sink_.emit(std::move(event));
}

void Supervisor::problem(std::string message, Tid tid)
{
    // Say so in the stream, exactly here, and in the trace summary.
    NoteEvent note;
    note.seq = capture_.next_seq();
    note.tid = tid;
    note.kind = NoteKind::Incomplete;
    note.message = message;
    emit(std::move(note));
    problems_.push_back(std::move(message));
}

int Supervisor::run(pid_t initial, const std::function<void()>& periodic)
{
    initial_ = initial;
    thread(initial);

    // SIGCHLD wakes the loop; SIGTERM and SIGHUP are forwarded to the
    // program. (SIGINT and SIGQUIT reach the program from the terminal
    // directly: the recorder ignores them and keeps recording.)
    sigset_t mask;
    sigemptyset(&mask);
    for (int s : {SIGCHLD, SIGTERM, SIGHUP})
        sigaddset(&mask, s);
    if (options_.attached)
        sigaddset(&mask, SIGINT); // Ctrl-C: the detach
    if (options_.freeze_signal)
        sigaddset(&mask, options_.freeze_signal);
    bool freeze_requested = false;
    sigset_t before;
    sigprocmask(SIG_BLOCK, &mask, &before);
    UniqueFd sigfd(signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
    UniqueFd ep(epoll_create1(EPOLL_CLOEXEC));
    if (sigfd.get() < 0 || ep.get() < 0)
        throw std::system_error(errno, std::generic_category(), "setting up the supervisor loop");
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.fd = sigfd.get();
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, sigfd.get(), &ev);
    ev.data.fd = capture_.ring_fd();
    epoll_ctl(ep.get(), EPOLL_CTL_ADD, capture_.ring_fd(), &ev);

    auto last_periodic = Clock::now();
    bool done = false;
    // A SIGCHLD sent before the mask above (the program's exec stop, as a
    // rule) was discarded: the first pass looks for stops without waiting.
    int wait_ms = 0;
    while (!done) {
        struct epoll_event events[4];
        int n = epoll_wait(ep.get(), events, 4, wait_ms);
        wait_ms = 20;
        if (n < 0 && errno != EINTR)
            throw std::system_error(errno, std::generic_category(), "epoll_wait");
        for (int i = 0; i < n; i++) {
            if (events[i].data.fd != sigfd.get())
                continue;
            struct signalfd_siginfo si;
            while (::read(sigfd.get(), &si, sizeof(si)) == sizeof(si)) {
                // Not one the program sent its own process group: that
                // reached the program already.
                bool from_program = std::any_of(threads_.begin(), threads_.end(), [&](const auto& kv) {
                    return kv.second.tgid == static_cast<Tid>(si.ssi_pid);
                });
                if (options_.freeze_signal && static_cast<int>(si.ssi_signo) == options_.freeze_signal)
                    freeze_requested = true;
                else if (options_.attached && si.ssi_signo != SIGCHLD)
                    detach_requested_ = true;
                else if ((si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP) && !from_program)
                    ::kill(initial_, static_cast<int>(si.ssi_signo));
            }
        }
        if (refusal_)
            capture_.drain(); // (nothing of it is written: the trace has ended)
        else
            drain_ring();
        for (;;) {
            int status = 0;
            pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
            if (tid == 0)
                break;
            if (tid < 0) {
                if (errno == EINTR)
                    continue;
                done = (errno == ECHILD);
                break;
            }
            on_stop(tid, status);
        }
        if (options_.detach_at && Clock::now() >= *options_.detach_at)
            detach_requested_ = true;
        if (detach_requested_ && !done && !refusal_) {
            detach_all();
            done = true;
        } else if (refusal_) {
            done = done || refusal_outlived();
        } else {
            check_deadlines();
            check_slices();
            if (options_.roll_due && Clock::now() >= next_roll_try_ && options_.roll_due())
                if (std::string why = roll_over(); !why.empty() && options_.roll_missed)
                    options_.roll_missed(why);
            if (std::exchange(freeze_requested, false))
                options_.freeze();
        }
        if (uint64_t r = capture_.ring_refusals(); r != refusals_seen_) {
            problem("the kernel side could not record " + std::to_string(r - refusals_seen_) +
                        " fork or exit records (ring buffer full)",
                    0);
            refusals_seen_ = r;
        }
        if (Clock::now() - last_periodic >= options_.flush_interval) {
            periodic();
            last_periodic = Clock::now();
        }
    }
    capture_.drain();
    sigprocmask(SIG_SETMASK, &before, nullptr);
    return initial_status_;
}

void Supervisor::kill_the_rest()
{
    // The initial process has exited (its leader's exit is reported once
    // all its threads are gone): what it left running (a daemon, an
    // orphan asleep) would keep the recording going for as long as it
    // lives. The kernel side records each death as any other.
    std::set<Tid> groups;
    for (const auto& [tid, t] : threads_)
        groups.insert(t.tgid);
    for (Tid tgid : groups) {
        // (One that has exited already, and is only still to be reported,
        // was not left running.)
        char state = thread_state(tgid);
        if (state && state != 'Z' && state != 'X' && ::kill(tgid, SIGKILL) == 0)
            killed_at_exit_++;
    }
}

void Supervisor::on_stop(pid_t tid, int status)
{
    if (refusal_) {
        on_stop_after_refusal(tid, status);
        return;
    }
    // A thread that gave the CPU up at a syscall entry must be known as
    // such before any of its stops is handled.
    drain_ring();
    StopInfo s = decode_wait_status(status);
    if (s.kind == StopInfo::Kind::Exited || s.kind == StopInfo::Kind::Signaled) {
        auto it = threads_.find(tid);
        Tid tgid = it != threads_.end() ? it->second.tgid : tid;
        if (it != threads_.end())
            threads_.erase(it);
        forget_tracing(tid, status);
        if (std::none_of(threads_.begin(), threads_.end(), [&](const auto& kv) { return kv.second.tgid == tgid; }))
            random_sites_.forget(tgid, false);
        on_thread_gone(tid, tgid);
        if (tid == initial_) {
            initial_status_ = status;
            if (options_.attached)
                detach_requested_ = !threads_.empty(); // what it started runs on, as without rewind
            else if (!options_.wait_all)
                kill_the_rest();
        }
        return;
    }
    stops_++;
    if (s.kind == StopInfo::Kind::PtraceEvent && s.event == PTRACE_EVENT_EXEC)
        take_over_leader(tid);
    Thread& t = thread(tid);
    t.listening = false;
    try {
        if (t.out_of_turn && park_stop(t, status))
            return;
        switch (s.kind) {
        case StopInfo::Kind::PtraceEvent:
            on_ptrace_event(t, s.event);
            break;
        case StopInfo::Kind::GroupStop:
            on_event_stop(t, s.signal);
            break;
        case StopInfo::Kind::SyscallStop:
            on_syscall_stop(t);
            break;
        case StopInfo::Kind::SignalDelivery:
            on_signal(t, s.signal);
            break;
        default:
            break;
        }
    } catch (const std::system_error& e) {
        // ESRCH: the thread died under us (killed by a signal, or its
        // process exec'd); its exit is reported separately.
        if (e.code().value() != ESRCH)
            throw;
    }
}

bool Supervisor::resume(Thread& t, int signo)
{
    if (detaching_)
        return true; // (it stays stopped, for the detach)
    if (t.out_of_turn && serialized(t)) {
        // It gave the CPU up at a syscall entry: it goes on in its turn.
        t.parked_signal = signo;
        if (!scheduler_.want(key(t), t.tid, Clock::now()))
            return true;
        t.out_of_turn = false;
        t.parked_signal = 0;
    }
    long request = std::exchange(t.step_next, false) ? PTRACE_SINGLESTEP
                   : t.syscall_stops                 ? PTRACE_SYSCALL
                                                     : PTRACE_CONT;
    if (::ptrace(static_cast<__ptrace_request>(request), t.tid, nullptr, reinterpret_cast<void*>(long(signo))) == 0)
        return true;
    if (errno != ESRCH)
        throw std::system_error(errno, std::generic_category(), "resuming thread " + std::to_string(t.tid));
    return false;
}

void Supervisor::on_ptrace_event(Thread& t, int event)
{
    switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE: {
        Tid child_tid = static_cast<Tid>(get_event_msg(t.tid));
        // A new thread's first stop can come before its creator's clone
        // stop, and it runs at once: it may have exited, and been reaped,
        // by now. Nothing of it is left to follow; its /proc entry is gone,
        // so a new entry here would take it for a process of its own.
        // (A new process waits at its first stop for this event.)
        std::optional<Tid> child_tgid;
        if (!threads_.contains(child_tid)) {
            auto read = proc_status_number(child_tid, "Tgid");
            if (!read)
                break;
            child_tgid = static_cast<Tid>(*read);
        }
        Thread& child = thread(child_tid, child_tgid);
        // A traced parent's child is traced: known as such before it may
        // start, and for a thread once its process is serialized (its
        // creator then gives the CPU up for its tracer stop).
        bool for_tracer = false;
        if (child.tgid == t.tgid) {
            serialize(key(t), t.tid);
            for_tracer = fork_stop_for_tracer(t, child, event);
        } else {
            for_tracer = fork_stop_for_tracer(t, child, event);
            if (options_.parallel)
                inherit_sync_probes(child, t.tgid);
            on_fork_event(t, child, event);
        }
        if (for_tracer)
            return;
        break;
    }
    case PTRACE_EVENT_VFORK_DONE:
        // Set for a recorded tracer only (kRealTracerOptions).
        if (event_stop_for_tracer(t, event))
            return;
        break;
    case PTRACE_EVENT_EXEC:
        on_exec(t);
        if (event_stop_for_tracer(t, event))
            return;
        break;
    case PTRACE_EVENT_SECCOMP:
        on_seccomp_stop(t); // resumes the thread, or keeps it stopped
        return;
    case PTRACE_EVENT_EXIT:
        if (event_stop_for_tracer(t, event))
            return;
        break;
    default:
        break;
    }
    resume(t, 0);
}

void Supervisor::on_event_stop(Thread& t, int signal)
{
    if (is_stop_signal(signal)) {
        // A group stop: keep the thread stopped until SIGCONT, as without
        // us (or, traced by a recorded tracer, until it says so).
        if (listen_notice_for_tracer(t, signal) || group_stop_for_tracer(t, signal))
            return;
        t.listening = ::ptrace(PTRACE_LISTEN, t.tid, nullptr, nullptr) == 0;
        // Stopped until SIGCONT, it lets the others of its schedule run
        // (its parent may wait for this stop); it goes on in its turn.
        if (serialized(t) && !t.out_of_turn) {
            capture_.drain();
            give_up_cpu(t);
            t.out_of_turn = true;
        }
        return;
    }
    if (t.wake_requested) {
        // Out of a wait of the kernel's, which it restarts: a tracee's stop
        // answers it now.
        t.wake_requested = false;
        t.waits_for_tracees = false;
    }
    if (event_stop_for_tracer(t, PTRACE_EVENT_STOP, signal)) {
        // (Any interrupt of rewind's own came as the same stop.)
        t.interrupt_requested = false;
        t.preempt_requested = false;
        return;
    }
    // A new task's first stop, or the interrupt we asked for.
    if (!t.started) {
        t.started = true;
        if (t.tid != t.tgid) {
            on_new_thread_stop(t);
            return;
        }
        if (options_.parallel)
            if (auto parent = proc_status_number(t.tgid, "PPid"))
                inherit_sync_probes(t, static_cast<Tid>(*parent));
        if (hold_new_child(t))
            return;
    }
    if (t.preempt_requested) {
        t.preempt_requested = false;
        if (!t.interrupt_requested) {
            start_preemption(t);
            return;
        }
    }
    if (t.interrupt_requested) {
        t.interrupt_requested = false;
        if (!t.deferred.empty()) {
            Registers regs = get_registers(t.tid);
            if (in_uprobes_page(read_mappings(t.tgid), regs[Registers::RIP])) {
                // Stopped in the kernel's uprobe trampoline or a probe's
                // out-of-line step (--parallel's probes): replay has no such
                // page, so the position could never be reached there. The
                // thread leaves it within a few instructions; ask again.
                t.deadline = Clock::now() + options_.signal_fallback;
            } else {
                auto probe = start_signal_probe(t, regs);
                if (probe == SignalProbeStart::HandedOver)
                    return;
                if (probe == SignalProbeStart::Plain)
                    deliver_at_position(t, regs, {});
            }
        }
    }
    resume(t, 0);
}

void Supervisor::inherit_sync_probes(Thread& child, Tid parent)
{
    // The child shares its parent's libc mapping without mapping it itself:
    // its probes go in before it runs, at its parent's fork stop or at its
    // own first stop, whichever comes first (the other finds them there).
    // A call it made unprobed would be missing from the trace.
    try {
        capture_.inherit_sync_probes(parent, child.tgid);
    } catch (const CaptureError& e) {
        problem(std::string(e.what()) + ": the threads of process " + std::to_string(child.tgid) + " are not ordered",
                child.tid);
    }
}

void Supervisor::on_syscall_stop(Thread& t)
{
    // Only threads with deferred signals run with syscall stops, and they
    // leave that mode at the first entry of a syscall of the program's. The
    // kernel's uretprobe trampoline (--parallel's return probes) makes one
    // of its own, absent from the trace: its entry and its exit (where
    // orig_rax reads -1) are passed by.
    // A recorded tracer's syscall stops come this way too
    // (syscall_stop_for_tracer).
    __ptrace_syscall_info info{};
    bool known = ::ptrace(PTRACE_GET_SYSCALL_INFO, t.tid, sizeof(info), &info) > 0;
    bool uretprobe = known && info.op == PTRACE_SYSCALL_INFO_ENTRY && info.entry.nr == RW_NR_URETPROBE;
    bool entry = known && info.op == PTRACE_SYSCALL_INFO_ENTRY && !uretprobe;
    if (entry && !t.deferred.empty()) {
        end_signal_probe(t);
        resend_deferred(t);
    }
    if (!uretprobe && known && syscall_stop_for_tracer(t))
        return;
    if (entry)
        t.syscall_stops = false;
    resume(t, 0);
}

void Supervisor::resend_deferred(Thread& t)
{
    for (const auto& si : t.deferred) {
        if (syscall(SYS_tgkill, t.tgid, t.tid, si.si_signo) != 0)
            throw std::system_error(errno, std::generic_category(), "re-sending a deferred signal");
        t.resent.push_back(si);
    }
    t.deferred.clear();
    t.syscall_stops = false;
}

void Supervisor::record_signal(Thread& t, const siginfo_t& info, SignalKind kind, const Registers& regs)
{
    capture_.drain();
    SignalEvent e;
    e.seq = capture_.next_seq();
    e.tid = t.tid;
    e.tgid = t.tgid;
    e.signo = info.si_signo;
    e.kind = kind;
    e.anchor_seq = assembler_.last_syscall_seq(t.tid).value_or(0);
    static_assert(sizeof(siginfo_t) == 128);
    std::memcpy(e.siginfo.data(), &info, sizeof(info));
    e.regs = regs;
    if (kind == SignalKind::AtPosition && !t.position_pages.empty()) {
        e.pages = t.position_pages;
        e.pages_hash = page_digest(t.tid, e.pages);
        e.pages_sum = page_sum(t.tid, e.pages);
    }
    emit(std::move(e));
}

void Supervisor::on_signal(Thread& t, int signo)
{
    siginfo_t si = get_siginfo(t.tid);
    if (forge_tracer_sigchld(t, si))
        si = get_siginfo(t.tid);

    if (signo == RW_STALL_SIGNAL) {
        if (auto stall = capture_.take_stall(t.tid)) {
            on_stall(t, *stall);
            return;
        }
    }
    if (signo == SIGSEGV && si.si_code == SI_KERNEL && emulate_tsc(t))
        return;
    if (signo == SIGTRAP && si.si_code == SI_KERNEL && emulate_random(t))
        return;
    if (signo == SIGTRAP && (on_probe_trap(t) || on_signal_probe_trap(t)))
        return;

    if (!t.namespace_init)
        t.namespace_init = is_namespace_init(t.tid);
    if (*t.namespace_init && !is_fault(signo, si) && dropped_by_namespace_init(t.tid, signo)) {
        // The kernel drops it (the init of a PID namespace); a replay,
        // not a namespace init, must not be given it.
        resume(t, signo);
        return;
    }

    Registers regs = get_registers(t.tid);
    if (si.si_code == SI_TKILL && si.si_pid == getpid()) {
        auto it =
            std::find_if(t.resent.begin(), t.resent.end(), [&](const siginfo_t& r) { return r.si_signo == signo; });
        if (it != t.resent.end()) {
            siginfo_t original = *it;
            t.resent.erase(it);
            set_siginfo(t.tid, original);
            SignalKind kind = t.at_position ? SignalKind::AtPosition : SignalKind::AtSyscall;
            const Registers& where = t.at_position ? t.position : regs;
            bool held = stop_for_tracer(t, original, kind, where);
            if (!held)
                record_signal(t, original, kind, where);
            if (t.resent.empty()) {
                t.at_position = false;
                t.position_pages.clear();
            }
            if (!held)
                resume(t, signo);
            return;
        }
    }
    if (is_fault(signo, si) && static_cast<int64_t>(regs[Registers::ORIG_RAX]) < 0) {
        if (stop_for_tracer(t, si, SignalKind::Fault, regs))
            return;
        record_signal(t, si, SignalKind::Fault, regs);
        if (*t.namespace_init && fault_kills_namespace_init(t.tid, signo)) {
            let_fault_kill(t);
            return;
        }
        resume(t, signo);
        return;
    }
    if (static_cast<int64_t>(regs[Registers::ORIG_RAX]) >= 0) {
        // Leaving a syscall: no user instruction ran since its exit event.
        // (The uretprobe trampoline's own syscall, not in the trace, leaves
        // orig_rax at -1: a signal delivered as it returns is in user code.)
        if (stop_for_tracer(t, si, SignalKind::AtSyscall, regs))
            return;
        record_signal(t, si, SignalKind::AtSyscall, regs);
        resume(t, signo);
        return;
    }
    // In user code: hold the signal until the thread's next syscall.
    hold_signal(t, si);
    resume(t, 0);
}

void Supervisor::hold_signal(Thread& t, const siginfo_t& si)
{
    // A standard signal already pending is not queued twice: the kernel
    // would merge the two, and so would the re-sent ones, which would then
    // leave one re-sent signal that never arrives.
    bool standard = si.si_signo < SIGRTMIN;
    if (standard && std::any_of(t.deferred.begin(), t.deferred.end(),
                                [&](const siginfo_t& d) { return d.si_signo == si.si_signo; }))
        return;
    deferred_signals_++;
    if (t.deferred.empty()) {
        t.deadline = Clock::now() + options_.signal_fallback;
        t.signal_probe_tried = false;
    }
    t.deferred.push_back(si);
    t.syscall_stops = true;
}

bool Supervisor::hold_while_stepping(Thread& t, int status)
{
    // A signal-delivery stop in user code, of a signal sent or raised by
    // the kernel for someone else's reasons; not the recorder's own stall
    // signal, not a stop signal, not a fault of the instruction stepped.
    if (!WIFSTOPPED(status) || (status >> 16) != 0)
        return false;
    int signo = WSTOPSIG(status);
    if (signo == SIGTRAP || signo == RW_STALL_SIGNAL || is_stop_signal(signo))
        return false;
    siginfo_t si = get_siginfo(t.tid);
    if (is_fault(signo, si))
        return false;
    hold_signal(t, si);
    return true;
}

void Supervisor::check_deadlines()
{
    release_interrupted_waits();
    auto now = Clock::now();
    for (auto& [tid, t] : threads_) {
        if (signal_probe_running(t, now))
            continue;
        if (t.deferred.empty() || t.interrupt_requested || now < t.deadline)
            continue;
        if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) == 0)
            t.interrupt_requested = true;
    }
}

bool Supervisor::emulate_tsc(Thread& t)
{
    Registers regs = get_registers(t.tid);
    TraceeMemory mem(t.tid);
    auto insn = decode_tsc_instruction(mem, regs[Registers::RIP]);
    if (!insn)
        return false;
    uint32_t aux = 0;
    uint64_t tsc = read_host_tsc(aux);
    capture_.drain();
    RdtscEvent e;
    e.seq = capture_.next_seq();
    e.tid = t.tid;
    e.ip = regs[Registers::RIP];
    e.tsc = tsc;
    e.aux = aux;
    e.rdtscp = insn->rdtscp;
    apply_tsc(regs, *insn, tsc, aux);
    set_registers(t.tid, regs);
    emit(std::move(e));
    rdtsc_traps_++;
    // The kernel forced the trap's SIGSEGV through a mask that blocked it,
    // and unblocked it: blocked again, as the program left it (rr's
    // sigprocmask_exec). (Its handler, which the kernel also reset, is not
    // put back.)
    uint64_t segv = signal_bit(SIGSEGV), now = 0;
    if (auto before = capture_.signal_mask(t.tid);
        before && (*before & segv) && ::ptrace(PTRACE_GETSIGMASK, t.tid, sizeof now, &now) == 0 && !(now & segv)) {
        now |= segv;
        ::ptrace(PTRACE_SETSIGMASK, t.tid, sizeof now, &now);
    }
    resume(t, 0);
    return true;
}

bool Supervisor::emulate_random(Thread& t)
{
    Registers regs = get_registers(t.tid);
    uint64_t ip = regs[Registers::RIP] - 1; // past our int3
    auto insn = random_sites_.at(t.tgid, ip);
    if (!insn)
        return false;
    capture_.drain();
    RandomEvent e;
    e.seq = capture_.next_seq();
    e.tid = t.tid;
    e.ip = ip;
    e.seed = insn->seed;
    e.value = host_random(insn->seed, insn->bits);
    apply_random(regs, *insn, ip, e.value);
    set_registers(t.tid, regs);
    emit(std::move(e));
    random_traps_++;
    resume(t, 0);
    return true;
}

void Supervisor::on_stall(Thread& t, const rw_stall& stall_entry)
{
    const rw_stall* stall = &stall_entry;
    // An entry that is no stall of this thread's (seen at a detach, in a
    // process that had just exec'd): nothing of it goes into the trace.
    if (stall->reason < RW_STALL_RING_FULL || stall->reason > RW_STALL_PROCESS_MEMORY ||
        stall->sc.h.tid != static_cast<uint32_t>(t.tid)) {
        if (!detaching_) {
            problem("thread " + std::to_string(t.tid) + " was stopped by the kernel side with no call to complete",
                    t.tid);
            resume(t, 0);
        }
        return;
    }
    // Everything the kernel side emitted before the stall is in the ring,
    // the thread's own yield at this call's entry too: taken now, before
    // its turn is decided (a turn asked for with the yield unseen would
    // run it alongside the thread its yield hands the CPU to).
    drain_ring();
    if (stall->reason == RW_STALL_VIEW && finish_answered_call(t, *stall))
        return;
    if (is_shared_mapping_call(stall->sc))
        note_shared_mapping(t, stall->sc);
    rw_stall viewed;
    if (stall->reason == RW_STALL_VIEW) {
        viewed = *stall;
        if (viewed.sc.nr == SYS_rseq)
            refuse_rseq(t, viewed.sc);
        else if (!give_program_view(t.tid, viewed.sc))
            problem("thread " + std::to_string(t.tid) + ": the program sees the recorder in the answer of " +
                        syscall_name(viewed.sc.nr),
                    t.tid);
        stall = &viewed;
    }
    if (stall->reason != RW_STALL_COPY_FILE && stall->reason != RW_STALL_TURN && stall->reason != RW_STALL_SHARED_MAP) {
        assembler_.discard_partial(t.tid);
        uint64_t args[RW_MAX_ARGS];
        std::copy(std::begin(stall->sc.args), std::end(stall->sc.args), args);
        TraceeMemory mem(t.tid);
        auto captured = capture_syscall_memory(mem, stall->sc.nr, args, stall->sc.ret);
        uint32_t flags = kSyscallRebuilt | (captured.unsized ? uint32_t(kSyscallUnsized) : 0u);
        if (stall->reason == RW_STALL_PROCESS_MEMORY) {
            // It wrote into another process: what the table calls its
            // outputs are addresses there, not in the caller.
            std::erase_if(captured.memory, [](const MemoryRange& m) { return m.dir == Direction::Out; });
        }
        std::optional<FileRef> file;
        uint64_t file_offset = 0;
        // A write through /proc/PID/mem: into the writer's own memory, an
        // output there; into another process's, that process and where.
        if (auto w = process_memory_written(mem, stall->sc.nr, args, stall->sc.ret)) {
            if (proc_status_number(w->tid, "Tgid") == t.tgid) {
                captured.memory.push_back(own_memory_written(mem, *w, stall->sc.nr, args, stall->sc.ret));
            } else {
                flags |= kSyscallWroteProcess;
                file = FileRef{0, 0, 0, 0, "", "/proc/" + std::to_string(w->tid) + "/mem"};
                file_offset = w->at;
                if (!threads_.count(w->tid))
                    problem("thread " + std::to_string(t.tid) + " wrote into the memory of process " +
                                std::to_string(w->tid) + ", which is not recorded",
                            t.tid);
            }
        } else if (stall->reason == RW_STALL_PROCESS_MEMORY) {
            // (Replay refuses the call: its effect is not in the trace.)
            flags |= kSyscallUnsized;
            problem("thread " + std::to_string(t.tid) +
                        " wrote into another process's memory, and rewind cannot tell where",
                    t.tid);
        }
        assembler_.emit_syscall(stall->sc, std::move(captured.memory), flags, std::move(file), file_offset);
        if (!captured.problem.empty())
            problem("thread " + std::to_string(t.tid) + ": " + captured.problem, t.tid);
        stalls_++;
    }
    resume(t, 0);
}

void Supervisor::take_over_leader(Tid tid)
{
    // An exec from a thread that did not lead its process: the kernel killed
    // the leader with the other threads and gave the exec'ing thread its id
    // (ptrace reports the leader's death only as this stop). The state kept
    // under that id is the dead leader's; the exec'ing thread's is its own.
    Tid former = static_cast<Tid>(get_event_msg(tid));
    auto it = threads_.find(former);
    if (former == tid || it == threads_.end())
        return;
    Thread moved = std::move(it->second);
    threads_.erase(it);
    moved.tid = tid;
    threads_.insert_or_assign(tid, std::move(moved));
}

void Supervisor::on_exec(Thread& t)
{
    Tid former = static_cast<Tid>(get_event_msg(t.tid));
    if (former != t.tid)
        threads_.erase(former);
    // The other threads are gone, and its memory is new: the process runs
    // freely again, out of any group it was in.
    if (Tid k = key(t); k != t.tgid) {
        run_next(k, scheduler_.gone(k, t.tid, Clock::now()));
        if (former != t.tid)
            run_next(k, scheduler_.gone(k, former, Clock::now()));
        groups_.leave(t.tgid);
        capture_.set_serialized(t.tgid, false);
        if (std::none_of(threads_.begin(), threads_.end(), [&](const auto& kv) { return key(kv.second) == k; }))
            unserialize(k);
    } else {
        unserialize(t.tgid);
    }
    t.out_of_turn = false;
    t.parked_signal = 0;
    t.tgid = t.tid; // the exec'ing thread now leads its process
    capture_.drain();

    ExecEvent e;
    e.tid = t.tid;
    e.tgid = t.tgid;
    e.former_tid = former;
    e.regs = get_registers(t.tid);
    TraceeMemory mem(t.tid);
    auto stack = read_initial_stack(mem, e.regs[Registers::RSP]);
    if (!stack) {
        problem("cannot read the initial stack of " + std::to_string(t.tid) + " after execve", t.tid);
    } else {
        if (std::string why = patch_vdso(mem, *stack); !why.empty())
            problem("process " + std::to_string(t.tid) + ": " + why +
                        "; its time calls through the vDSO are not "
                        "recorded",
                    t.tid);
        e.argv = stack->argv;
        e.envp = stack->envp;
        options_.scrub_env.apply(e.envp);
        e.auxv = stack->auxv;
        if (auto execfn = stack->aux(AT_EXECFN))
            e.filename = mem.read_string(RemoteAddr(*execfn), 4096).value_or("");
        if (auto random = stack->aux(AT_RANDOM))
            mem.read(RemoteAddr(*random), e.at_random);
    }
    std::error_code ec;
    e.executable = std::filesystem::read_symlink("/proc/" + std::to_string(t.tid) + "/exe", ec).string();
    e.mappings = read_mappings(t.tid);
    random_sites_.forget(t.tgid, true);
    files_.store_mappings(t.tid, e.mappings);
    e.seq = capture_.next_seq();
    emit(std::move(e));
    trap_exec_for_tracer(t);
}

} // namespace rw
