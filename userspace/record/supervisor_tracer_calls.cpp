// A recorded tracer's ptrace requests and waits, answered by the
// supervisor (emulated_tracing.h).
//
// The recording filter stops every ptrace, wait4 and waitid call at its
// entry. A request is worked out there, on the tracee the supervisor
// traces for real; the call itself then runs and fails without effect (the
// caller is nobody's tracer for the kernel), and at its return the kernel
// side stops it (BpfCapture::answer_at_exit) for the supervisor to give it
// the answer and record that. A wait that reports a tracee's stop is made
// to fail at once (an invalid option) and answered the same way; any other
// wait is the kernel's, and is cut short (PTRACE_INTERRUPT, after which the
// kernel restarts it) when a stop it should report comes.
//
// Replay answers the tracer from the trace, and makes what a request
// changed in the tracee on the replayed tracee (replay_tracer.cpp).
#include <asm/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <span>

#include "bpf_capture.h"
#include "event_assembler.h"
#include "process_image.h"
#include "supervisor.h"
#include "text.h"
#include "tracee.h"

namespace rw {
namespace {

// The kernel's "interrupted, restart unless the handler says otherwise".
constexpr int64_t kErestartsys = 512;
// No option of wait4's or waitid's: a call with it fails with EINVAL.
constexpr uint64_t kFailingWaitOption = 0x10000000;
constexpr uint64_t kWaitOptions =
    WNOHANG | WUNTRACED | WCONTINUED | WEXITED | WNOWAIT | __WNOTHREAD | __WCLONE | __WALL;
// The options whose stops rewind stands in for.
constexpr uint64_t kEmulatedOptions = PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEEXIT | PTRACE_O_TRACEEXEC |
                                      PTRACE_O_EXITKILL | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |
                                      PTRACE_O_TRACECLONE | PTRACE_O_TRACEVFORKDONE;
// Larger register sets (PTRACE_GETREGSET) are not asked for.
constexpr size_t kMaxRegset = 64 * 1024;

constexpr Registers::Index kArgRegisters[] = {Registers::RDI, Registers::RSI, Registers::RDX,
                                              Registers::R10, Registers::R8,  Registers::R9};

MemoryRange input(uint64_t addr, std::span<const uint8_t> bytes)
{
    MemoryRange m;
    m.addr = addr;
    m.dir = Direction::In;
    m.length = bytes.size();
    m.bytes.assign(bytes.begin(), bytes.end());
    return m;
}

MemoryRange output(uint64_t addr, const void* bytes, size_t size)
{
    MemoryRange m;
    m.addr = addr;
    m.dir = Direction::Out;
    m.length = size;
    const auto* p = static_cast<const uint8_t*>(bytes);
    m.bytes.assign(p, p + size);
    return m;
}

std::string request_name(long request)
{
    switch (request) {
    case PTRACE_POKETEXT:
        return "PTRACE_POKETEXT";
    case PTRACE_POKEDATA:
        return "PTRACE_POKEDATA";
    case PTRACE_POKEUSER:
        return "PTRACE_POKEUSER";
    case PTRACE_SETREGS:
        return "PTRACE_SETREGS";
    case PTRACE_SETFPREGS:
        return "PTRACE_SETFPREGS";
    case PTRACE_SETREGSET:
        return "PTRACE_SETREGSET";
    case PTRACE_SETSIGINFO:
        return "PTRACE_SETSIGINFO";
    case PTRACE_SETSIGMASK:
        return "PTRACE_SETSIGMASK";
    case PTRACE_SET_THREAD_AREA:
        return "PTRACE_SET_THREAD_AREA";
    case PTRACE_ARCH_PRCTL:
        return "PTRACE_ARCH_PRCTL";
    case PTRACE_SINGLESTEP:
        return "PTRACE_SINGLESTEP";
    case PTRACE_SYSCALL:
        return "PTRACE_SYSCALL";
    case PTRACE_SYSEMU:
        return "PTRACE_SYSEMU";
    case PTRACE_SYSEMU_SINGLESTEP:
        return "PTRACE_SYSEMU_SINGLESTEP";
    case PTRACE_LISTEN:
        return "PTRACE_LISTEN";
    case PTRACE_SETOPTIONS:
        return "PTRACE_SETOPTIONS";
    case PTRACE_SEIZE:
        return "PTRACE_SEIZE";
    default:
        return "request " + std::to_string(request);
    }
}

bool changes_tracee(long request, uint64_t data)
{
    switch (request) {
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
    case PTRACE_POKEUSER:
    case PTRACE_SETREGS:
    case PTRACE_SETFPREGS:
    case PTRACE_SETREGSET:
    case PTRACE_SETSIGINFO:
    case PTRACE_SET_THREAD_AREA:
        return true;
    case PTRACE_ARCH_PRCTL:
        return data != ARCH_GET_FS && data != ARCH_GET_GS;
    default:
        return false;
    }
}

pid_t pgid_of(Tid tid)
{
    return ::getpgid(tid);
}

// `tid` leads a process whose parent is process `tgid`.
bool is_child_of(Tid tid, Tid tgid)
{
    return proc_status_number(tid, "Tgid") == tid && proc_status_number(tid, "PPid") == tgid;
}

} // namespace

void Supervisor::answer(Thread& t, AnsweredCall call)
{
    t.answered = std::move(call);
    capture_.answer_at_exit(t.tid);
    resume(t, 0);
}

bool Supervisor::finish_answered_call(Thread& t, const rw_stall& stall)
{
    if (!t.answered)
        return false;
    AnsweredCall call = std::move(*t.answered);
    t.answered.reset();
    TraceeMemory mem(t.tid);
    for (auto& m : call.outputs)
        if (!mem.write(RemoteAddr(m.addr), m.bytes)) {
            // The kernel would have failed the call with EFAULT.
            call.ret = -EFAULT;
            m.unreadable = true;
        }
    rw_rec_syscall sc = stall.sc;
    sc.ret = call.ret;
    Registers regs = get_registers(t.tid);
    regs[Registers::RAX] = static_cast<uint64_t>(call.ret);
    if (call.restore_arg >= 0) {
        sc.args[call.restore_arg] = call.restore_value;
        regs[kArgRegisters[call.restore_arg]] = call.restore_value;
    }
    set_registers(t.tid, regs);
    assembler_.discard_partial(t.tid);
    std::vector<MemoryRange> memory = std::move(call.inputs);
    memory.insert(memory.end(), call.outputs.begin(), call.outputs.end());
    assembler_.emit_syscall(sc, std::move(memory), kSyscallRebuilt);
    stalls_++;
    resume(t, 0);
    return true;
}

void Supervisor::on_ptrace_call(Thread& t, const uint64_t (&args)[6])
{
    long request = static_cast<long>(args[0]);
    auto pid = static_cast<pid_t>(args[1]);
    uint64_t addr = args[2], data = args[3];
    AnsweredCall call;
    auto fail = [&](int err) { call.ret = -err; };

    if (request == PTRACE_TRACEME) {
        auto parent = proc_status_number(t.tgid, "PPid");
        if (!parent || !threads_.count(static_cast<Tid>(*parent))) {
            refuse_request(t, "PTRACE_TRACEME",
                           "its parent is not a recorded process (rewind stands in for a tracer "
                           "only between recorded processes)");
            return;
        }
        if (tracing_.find(t.tid)) {
            fail(EPERM);
        } else {
            EmulatedTracee e;
            e.tid = t.tid;
            e.tgid = t.tgid;
            e.tracer = static_cast<Tid>(*parent);
            e.tracer_tgid = thread(e.tracer).tgid;
            e.parent_tgid = e.tracer_tgid;
            e.traceme = true;
            tracing_.add(e);
        }
        answer(t, std::move(call));
        return;
    }
    if (request == PTRACE_ATTACH || request == PTRACE_SEIZE) {
        std::string name = request == PTRACE_ATTACH ? "PTRACE_ATTACH" : "PTRACE_SEIZE";
        auto it = threads_.find(pid);
        if (it == threads_.end()) {
            if (pid > 0 && (::kill(pid, 0) == 0 || errno != ESRCH)) {
                refuse_request(t, name + ", " + std::to_string(pid),
                               "process " + std::to_string(pid) +
                                   " is not recorded (rewind stands in for a tracer only between recorded processes)");
                return;
            }
            fail(ESRCH);
        } else if (it->second.tgid == t.tgid || tracing_.find(pid)) {
            fail(EPERM);
        } else if (request == PTRACE_SEIZE && addr != 0) {
            fail(EIO);
        } else if (request == PTRACE_SEIZE && (data & ~uint64_t(PTRACE_O_MASK))) {
            fail(EINVAL);
        } else if (request == PTRACE_SEIZE && (data & ~kEmulatedOptions)) {
            refuse_request(t, name + ", " + std::to_string(pid) + ", options " + hex(data),
                           "rewind stands in for a tracer's exit, exec, fork and signal stops, not for the seccomp "
                           "stops these options ask for");
            return;
        } else {
            EmulatedTracee e;
            e.tid = pid;
            e.tgid = it->second.tgid;
            e.tracer = t.tid;
            e.tracer_tgid = t.tgid;
            e.parent_tgid = static_cast<Tid>(proc_status_number(it->second.tgid, "PPid").value_or(0));
            e.seized = request == PTRACE_SEIZE;
            e.options = e.seized ? data : 0;
            e.attach_stop = !e.seized;
            EmulatedTracee& added = tracing_.add(e);
            // PTRACE_ATTACH's SIGSTOP is not sent: the kernel side's stalls
            // stop threads with SIGSTOP, and two would merge into one. The
            // thread is interrupted instead, and its stop is the SIGSTOP's
            // (event_stop_for_tracer). The options set for real
            // (kRealTracerOptions) are set at that stop too.
            added.options_pending = added.options & kRealTracerOptions;
            // Seized in a group stop: the kernel traps it into the stop
            // again for its new tracer, whose wait reports it. Interrupted,
            // the listening thread stops with PTRACE_EVENT_STOP and the
            // stop signal, which becomes the tracer's group stop
            // (group_stop_for_tracer).
            if (added.attach_stop || added.options_pending || it->second.listening)
                ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr);
        }
        answer(t, std::move(call));
        return;
    }

    EmulatedTracee* tracee = tracing_.find(pid);
    bool mine = tracee && (tracee->tracer == t.tid || (tracee->traceme && tracee->tracer_tgid == t.tgid));
    if (!mine) {
        fail(ESRCH);
    } else if (request == PTRACE_KILL) {
        ::kill(tracee->tgid, SIGKILL);
    } else if (request == PTRACE_INTERRUPT) {
        if (!tracee->seized) {
            fail(EIO);
        } else if (!tracee->stop && !tracee->interrupt_requested &&
                   ::ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr) == 0) {
            tracee->interrupt_requested = true;
        }
    } else if (!tracee->stop || tracee->stop->kind == EmulatedStop::Kind::Exit) {
        fail(ESRCH); // running, or gone: the kernel answers so
    } else if (tracee->stop->kind == EmulatedStop::Kind::Syscall && changes_tracee(request, data)) {
        refuse_request(t, request_name(request) + ", " + std::to_string(pid),
                       "the tracer changes its tracee at a system call stop, which replay has no point to do again "
                       "at (rewind stands in for a tracer that reads its tracee there)");
        return;
    } else {
        switch (request) {
        case PTRACE_CONT:
        case PTRACE_DETACH:
            if (data > _NSIG) {
                fail(EIO);
            } else if (request == PTRACE_DETACH) {
                EmulatedTracee copy = *tracee;
                tracing_.erase(pid);
                continue_tracee(copy, static_cast<int>(data));
            } else {
                continue_tracee(*tracee, static_cast<int>(data));
            }
            break;
        case PTRACE_SETOPTIONS:
            if (data & ~uint64_t(PTRACE_O_MASK)) {
                fail(EINVAL);
            } else if (data & ~kEmulatedOptions) {
                refuse_request(t, "PTRACE_SETOPTIONS, " + std::to_string(pid) + ", options " + hex(data),
                               "rewind stands in for a tracer's exit, exec, fork and signal stops, not for the "
                               "seccomp stops these options ask for");
                return;
            } else {
                tracee->options = data;
                long real = kRecordingPtraceOptions | (data & kRealTracerOptions);
                ::ptrace(PTRACE_SETOPTIONS, pid, nullptr, reinterpret_cast<void*>(real));
            }
            break;
        case PTRACE_GETEVENTMSG: {
            unsigned long msg = tracee->stop->event_msg;
            call.outputs.push_back(output(data, &msg, sizeof msg));
            break;
        }
        case PTRACE_GETSIGINFO:
            if (tracee->stop->kind != EmulatedStop::Kind::Signal)
                fail(EINVAL);
            else
                call.outputs.push_back(output(data, &tracee->stop->siginfo, sizeof(siginfo_t)));
            break;
        case PTRACE_PEEKTEXT:
        case PTRACE_PEEKDATA:
        case PTRACE_PEEKUSER: {
            errno = 0;
            long word = ::ptrace(static_cast<__ptrace_request>(request), pid, addr, nullptr);
            if (errno)
                fail(errno);
            else
                call.outputs.push_back(output(data, &word, sizeof word));
            break;
        }
        case PTRACE_GETREGS:
        case PTRACE_GETFPREGS:
        case PTRACE_GET_THREAD_AREA: {
            union {
                user_regs_struct regs;
                user_fpregs_struct fpregs;
                uint8_t desc[16];
            } buf{};
            size_t size = request == PTRACE_GETREGS     ? sizeof buf.regs
                          : request == PTRACE_GETFPREGS ? sizeof buf.fpregs
                                                        : sizeof buf.desc;
            if (::ptrace(static_cast<__ptrace_request>(request), pid, addr, &buf) != 0)
                fail(errno);
            else
                call.outputs.push_back(output(data, &buf, size));
            break;
        }
        case PTRACE_GETREGSET: {
            TraceeMemory mem(t.tid);
            auto iov = mem.read_value<iovec>(RemoteAddr(data));
            if (!iov) {
                fail(EFAULT);
                break;
            }
            std::vector<uint8_t> buf(std::min(iov->iov_len, kMaxRegset));
            iovec local{buf.data(), buf.size()};
            if (::ptrace(PTRACE_GETREGSET, pid, addr, &local) != 0) {
                fail(errno);
                break;
            }
            call.outputs.push_back(output(reinterpret_cast<uint64_t>(iov->iov_base), buf.data(), local.iov_len));
            iovec answered{iov->iov_base, local.iov_len};
            call.outputs.push_back(output(data, &answered, sizeof answered));
            break;
        }
        case PTRACE_ARCH_PRCTL:
            if (data == ARCH_GET_FS || data == ARCH_GET_GS) {
                unsigned long base = 0;
                if (::ptrace(PTRACE_ARCH_PRCTL, pid, &base, data) != 0)
                    fail(errno);
                else
                    call.outputs.push_back(output(addr, &base, sizeof base));
            } else if (::ptrace(PTRACE_ARCH_PRCTL, pid, addr, data) != 0) {
                fail(errno);
            }
            break;
        case PTRACE_POKETEXT:
        case PTRACE_POKEDATA:
        case PTRACE_POKEUSER:
            // Replay does the same to its tracee (replay_tracer.cpp).
            if (::ptrace(static_cast<__ptrace_request>(request), pid, addr, data) != 0)
                fail(errno);
            break;
        case PTRACE_SETREGS:
        case PTRACE_SETFPREGS:
        case PTRACE_SET_THREAD_AREA: {
            size_t size = request == PTRACE_SETREGS     ? sizeof(user_regs_struct)
                          : request == PTRACE_SETFPREGS ? sizeof(user_fpregs_struct)
                                                        : 16;
            std::vector<uint8_t> buf(size);
            if (!TraceeMemory(t.tid).read(RemoteAddr(data), buf)) {
                fail(EFAULT);
                break;
            }
            call.inputs.push_back(input(data, buf));
            if (::ptrace(static_cast<__ptrace_request>(request), pid, addr, buf.data()) != 0)
                fail(errno);
            break;
        }
        case PTRACE_SETREGSET: {
            TraceeMemory mem(t.tid);
            auto iov = mem.read_value<iovec>(RemoteAddr(data));
            std::vector<uint8_t> buf(iov ? std::min(iov->iov_len, kMaxRegset) : 0);
            if (!iov || !mem.read(RemoteAddr(reinterpret_cast<uint64_t>(iov->iov_base)), buf)) {
                fail(EFAULT);
                break;
            }
            call.inputs.push_back(input(data, {reinterpret_cast<const uint8_t*>(&*iov), sizeof(iovec)}));
            call.inputs.push_back(input(reinterpret_cast<uint64_t>(iov->iov_base), buf));
            iovec local{buf.data(), buf.size()};
            if (::ptrace(PTRACE_SETREGSET, pid, addr, &local) != 0)
                fail(errno);
            break;
        }
        case PTRACE_SETSIGINFO: {
            siginfo_t si{};
            if (!TraceeMemory(t.tid).read(RemoteAddr(data), {reinterpret_cast<uint8_t*>(&si), sizeof si})) {
                fail(EFAULT);
            } else if (tracee->stop->kind != EmulatedStop::Kind::Signal) {
                fail(EINVAL);
            } else {
                call.inputs.push_back(input(data, {reinterpret_cast<const uint8_t*>(&si), sizeof si}));
                tracee->stop->siginfo = si; // the signal the tracer passes on carries it
            }
            break;
        }
        case PTRACE_SINGLESTEP:
            if (data > _NSIG) {
                fail(EIO);
            } else {
                // Its next stop is one instruction on (a SIGTRAP, which the
                // tracer sees): replay runs it to that point.
                thread(pid).step_next = true;
                continue_tracee(*tracee, static_cast<int>(data));
            }
            break;
        case PTRACE_SYSCALL:
            if (data > _NSIG)
                fail(EIO);
            else
                continue_tracee(*tracee, static_cast<int>(data), true);
            break;
        case PTRACE_LISTEN:
            if (!tracee->seized || tracee->stop->kind != EmulatedStop::Kind::Group) {
                fail(EIO);
            } else if (::ptrace(PTRACE_LISTEN, pid, nullptr, nullptr) != 0) {
                // Held in a group stop rewind made up (continue_tracee),
                // the thread has no real one to listen in.
                refuse_request(t, "PTRACE_LISTEN, " + std::to_string(pid),
                               "rewind cannot keep the tracee listening in this group stop");
                return;
            } else {
                tracee->stop.reset();
                tracee->listening = true;
            }
            break;
        case PTRACE_SETSIGMASK:
        case PTRACE_SYSEMU:
        case PTRACE_SYSEMU_SINGLESTEP:
            refuse_request(t, request_name(request) + ", " + std::to_string(pid),
                           "rewind stands in for a tracer that watches, changes, steps its tracee or stops it at "
                           "system calls, not yet for one that emulates its system calls");
            return;
        default:
            fail(EIO);
            break;
        }
    }
    answer(t, std::move(call));
}

void Supervisor::on_wait_call(Thread& t)
{
    if (!tracing_.is_tracer(t.tgid)) {
        t.holds_wait = false;
        resume(t, 0);
        return;
    }
    Registers regs = get_registers(t.tid);
    int nr = static_cast<int>(regs[Registers::ORIG_RAX]);
    uint64_t a[6];
    for (int i = 0; i < 6; i++)
        a[i] = regs[kArgRegisters[i]];
    pid_t own_pgid = pgid_of(t.tgid);
    bool is_wait4 = nr == SYS_wait4;
    int options_arg = is_wait4 ? 2 : 3;
    uint64_t options = a[options_arg];
    std::optional<WaitSelector> selector = is_wait4 ? wait4_selector(static_cast<pid_t>(a[0]), options, own_pgid)
                                                    : waitid_selector(a[0], a[1], options, own_pgid);
    if (!selector || (options & ~kWaitOptions)) {
        resume(t, 0); // the kernel's to answer
        return;
    }
    EmulatedTracee* tracee = tracing_.reportable(*selector, t.tid, t.tgid, pgid_of);
    if (!tracee) {
        t.holds_wait = false;
        if (selector->no_hang) {
            resume(t, 0);
        } else if (selector->which == WaitSelector::Which::Pid && tracing_.find(selector->id) &&
                   !is_child_of(selector->id, t.tgid)) {
            // A tracee that is no child of the caller: the kernel would
            // fail the wait (ECHILD). It is held here until its stop, or
            // until a signal interrupts it (release_interrupted_waits).
            t.holds_wait = true;
        } else {
            t.waits_for_tracees = true;
            resume(t, 0);
        }
        return;
    }
    t.holds_wait = false;
    t.waits_for_tracees = false;
    if (selector->consume)
        tracee->stop->reported = true;
    int status = tracee->stop->status;
    bool ended = tracee->stop->kind == EmulatedStop::Kind::Exit;
    AnsweredCall call;
    call.restore_arg = options_arg;
    call.restore_value = options;
    struct rusage usage {};
    if (is_wait4) {
        call.ret = tracee->tid;
        if (a[1])
            call.outputs.push_back(output(a[1], &status, sizeof status));
        if (a[3])
            call.outputs.push_back(output(a[3], &usage, sizeof usage));
    } else {
        call.ret = 0;
        siginfo_t si = cld_trapped(*tracee, status);
        if (!ended)
            si.si_status = status >> 8; // waitid gives the whole stop code
        if (a[2])
            call.outputs.push_back(output(a[2], &si, sizeof si));
        if (a[4])
            call.outputs.push_back(output(a[4], &usage, sizeof usage));
    }
    if (ended && selector->consume)
        tracing_.erase(tracee->tid); // reaped
    regs[kArgRegisters[options_arg]] = options | kFailingWaitOption;
    set_registers(t.tid, regs);
    answer(t, std::move(call));
}

void Supervisor::release_interrupted_waits()
{
    // A held wait is interrupted by a signal as the kernel's would be: it
    // returns ERESTARTSYS, and the kernel delivers the signal, then
    // restarts the wait or fails it with EINTR, as the handler says.
    for (auto& [tid, t] : threads_) {
        if (!t.holds_wait)
            continue;
        uint64_t pending = thread_signal_mask(tid, "SigPnd") | thread_signal_mask(tid, "ShdPnd");
        if (!(pending & ~thread_signal_mask(tid, "SigBlk")))
            continue;
        t.holds_wait = false;
        Registers regs = get_registers(tid);
        bool is_wait4 = static_cast<long>(regs[Registers::ORIG_RAX]) == SYS_wait4;
        int options_arg = is_wait4 ? 2 : 3;
        AnsweredCall call;
        call.ret = -kErestartsys;
        call.restore_arg = options_arg;
        call.restore_value = regs[kArgRegisters[options_arg]];
        regs[kArgRegisters[options_arg]] |= kFailingWaitOption;
        set_registers(tid, regs);
        answer(t, std::move(call));
    }
}

} // namespace rw
