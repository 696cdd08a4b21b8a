#include "attach.h"

#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/rseq.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "private_copy.h"
#include "process_image.h"
#include "syscall_restart.h"
#include "system_info.h"
#include "thread_injector.h"
#include "tracee.h"
#include "usage_error.h"
#include "vdso.h"

namespace rw {
namespace {

constexpr int kMaxVdsoSteps = 100000;

std::string status_field(pid_t pid, const std::string& name)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + ":", 0) == 0) {
            std::string v = line.substr(name.size() + 1);
            v.erase(0, v.find_first_not_of(" \t"));
            return v;
        }
    return "";
}

std::string process_name(pid_t pid)
{
    std::string n = status_field(pid, "Name");
    return n.empty() ? "?" : n;
}

int yama_scope()
{
    std::ifstream in("/proc/sys/kernel/yama/ptrace_scope");
    int scope = 0;
    return (in >> scope) ? scope : 0;
}

// Before the instruction that made the syscall it was in, to make it again
// (what the kernel does on its own after a stop without a handler).
// Returns the call a restart_syscall will continue, or -1.
int out_of_syscall(pid_t tid, Registers& r)
{
    auto orig = static_cast<int64_t>(r[Registers::ORIG_RAX]);
    int restarted = -1;
    if (orig < 0)
        return restarted;
    auto rax = static_cast<int64_t>(r[Registers::RAX]);
    if (rax == kErestartSys || rax == kErestartNoIntr || rax == kErestartNoHand) {
        r[Registers::RAX] = static_cast<uint64_t>(orig);
        r[Registers::RIP] -= 2;
    } else if (rax == kErestartRestartBlock) {
        r[Registers::RAX] = SYS_restart_syscall;
        r[Registers::RIP] -= 2;
        restarted = static_cast<int>(orig);
    }
    r[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    set_registers(tid, r);
    return restarted;
}

} // namespace

namespace {

// A thread stopped at a clone's, fork's or exec's event is inside that
// call, which has done its work: it is taken to the call's exit, where its
// registers are its own again (a call injected from the event stop would
// come back with the call's result: the thread would think its clone
// failed, and after an exec the injected call would be another).
bool past_clone_event(pid_t tid)
{
    siginfo_t si{};
    if (ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0 || si.si_signo != SIGTRAP)
        return true;
    int event = si.si_code >> 8;
    if (event != PTRACE_EVENT_CLONE && event != PTRACE_EVENT_FORK && event != PTRACE_EVENT_VFORK &&
        event != PTRACE_EVENT_EXEC)
        return true;
    if (ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr) != 0)
        return false;
    // A vfork's exit waits for the child's exec or exit: not for ever.
    return stops_within(tid, std::chrono::seconds(10));
}

// The address the kernel clears when the thread exits (set_tid_address).
uint64_t clear_child_tid_of(ThreadInjector& in)
{
    uint64_t value = 0;
    std::vector<uint8_t> word(sizeof value);
    if (in.call_with_output(SYS_prctl, 1, word, PR_GET_TID_ADDRESS) == 0)
        std::memcpy(&value, word.data(), sizeof value);
    return value;
}

bool put_stopped_thread_before_syscall(pid_t tid, int* restarted_call)
{
    if (!past_clone_event(tid))
        return false;
    Registers r = get_registers(tid);
    // (At an entry stop the kernel has put -ENOSYS in rax. A thread just
    // made by clone, at its first stop, has 0 there and is past its call:
    // made again, the clone would start a second thread on the same stack.)
    __ptrace_syscall_info info{};
    if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, reinterpret_cast<void*>(sizeof info), &info) > 0 &&
        info.op == PTRACE_SYSCALL_INFO_ENTRY && static_cast<int64_t>(r[Registers::RAX]) == -ENOSYS) {
        // At its entry: skipped (no number), and made again from user code.
        r[Registers::RAX] = r[Registers::ORIG_RAX];
        r[Registers::RIP] -= 2;
        r[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
        set_registers(tid, r);
        if (ptrace(PTRACE_SYSCALL, tid, nullptr, nullptr) != 0)
            return false;
        int status = 0;
        if (waitpid(tid, &status, __WALL) != tid)
            return false;
        StopInfo s = decode_wait_status(status);
        if (s.kind == StopInfo::Kind::Exited || s.kind == StopInfo::Kind::Signaled)
            return false;
        set_registers(tid, r);
        return true;
    }
    int restarted = out_of_syscall(tid, r);
    if (restarted_call)
        *restarted_call = restarted;
    return true;
}

// Each attached process's guardian hears of the calls injected into its
// threads (a process of the tree, or one it forked while recorded, which
// the guardian of the process it was attached with looks after).
std::map<pid_t, AttachGuardian*>& guardians()
{
    static std::map<pid_t, AttachGuardian*> by_process;
    return by_process;
}

AttachGuardian* guardian_of_thread(pid_t tid)
{
    auto& all = guardians();
    if (all.empty())
        return nullptr;
    for (pid_t p = tid; p > 1;) {
        auto tgid = static_cast<pid_t>(proc_status_number(p, "Tgid").value_or(0));
        if (auto it = all.find(tgid); it != all.end())
            return it->second;
        auto parent = static_cast<pid_t>(proc_status_number(tgid, "PPid").value_or(0));
        if (tgid <= 0 || parent == p)
            break;
        p = parent;
    }
    return all.begin()->second;
}

void guard_injections(pid_t process, AttachGuardian* guardian)
{
    if (guardian)
        guardians()[process] = guardian;
    else
        guardians().erase(process);
    if (guardians().empty()) {
        set_injection_hook({});
        return;
    }
    set_injection_hook([](pid_t tid, const Registers* saved, uint64_t at) {
        AttachGuardian* g = guardian_of_thread(tid);
        if (!g)
            return;
        if (saved)
            g->injecting(tid, *saved, at);
        else
            g->injected(tid);
    });
}

} // namespace

bool put_before_syscall(pid_t tid, int* restarted_call)
{
    if (restarted_call)
        *restarted_call = -1;
    try {
        return put_stopped_thread_before_syscall(tid, restarted_call);
    } catch (const std::system_error& e) {
        // ESRCH: it ended meanwhile (killed by another thread's exit_group
        // or execve); there is nothing of it to put back.
        if (e.code().value() != ESRCH)
            throw;
        return false;
    }
}

std::string attach_refusal(pid_t pid)
{
    std::string p = std::to_string(pid);
    if (pid <= 0)
        return "'" + p + "' is not a process id";
    if (pid == getpid())
        return "process " + p + " is rewind itself";
    if (!std::filesystem::exists("/proc/" + p + "/status"))
        return "there is no process " + p;
    std::string name = process_name(pid);
    std::string who = "process " + p + " (" + name + ")";
    if (std::string tgid = status_field(pid, "Tgid"); !tgid.empty() && tgid != p)
        return p + " is a thread of process " + tgid + ": give the process's id";
    std::string state = status_field(pid, "State");
    if (!state.empty() && state[0] == 'Z')
        return who + " has exited (a zombie)";
    std::error_code ec;
    if (std::filesystem::read_symlink("/proc/" + p + "/exe", ec).empty() && ec.value() == ENOENT)
        return who + " is a kernel thread";
    std::string tracer = status_field(pid, "TracerPid");
    if (!tracer.empty() && tracer != "0")
        return who + " is already traced by process " + tracer + " (" + process_name(std::stoi(tracer)) +
               "), a debugger or strace: a process has one tracer; detach that one first";
    if (!state.empty() && state[0] == 'T')
        return who + " is stopped (job control): continue it first (kill -CONT " + p + ")";
    bool cap_ptrace = has_capability(Capability::SysPtrace);
    if (!cap_ptrace) {
        std::istringstream uids(status_field(pid, "Uid"));
        uid_t real = 0, effective = 0, saved = 0;
        uids >> real >> effective >> saved;
        uid_t me = geteuid();
        if (real != me || effective != me || saved != me)
            return who + " runs as user " + std::to_string(effective) + "; attaching needs the same user (" +
                   std::to_string(me) + " here) or CAP_SYS_PTRACE";
        int scope = yama_scope();
        if (scope >= 2)
            return "Yama's ptrace_scope is " + std::to_string(scope) + " (/proc/sys/kernel/yama/ptrace_scope): " +
                   (scope == 3 ? "no process may attach to another until the next boot"
                               : "attaching needs CAP_SYS_PTRACE (run rewind as root)");
    }
    {
        // CRIU reads the resource limits of the copy it dumps (prlimit),
        // which for another user's process takes CAP_SYS_RESOURCE.
        std::istringstream uids(status_field(pid, "Uid"));
        uid_t real = 0, effective = 0, saved = 0;
        uids >> real >> effective >> saved;
        uid_t me = getuid();
        if ((real != me || effective != me || saved != me) && !has_capability(Capability::SysResource))
            return who + " runs as user " + std::to_string(effective) +
                   ": its start image (CRIU) reads its resource limits, which for another user's process "
                   "needs CAP_SYS_RESOURCE, and rewind lacks it here";
    }
    if (yama_scope() == 3)
        return "Yama's ptrace_scope is 3 (/proc/sys/kernel/yama/ptrace_scope): no process may attach to another "
               "until the next boot";
    return "";
}

Attachment::Attachment(pid_t pid, long ptrace_options) : pid_(pid)
{
    if (std::string why = attach_refusal(pid); !why.empty())
        throw UsageError("cannot attach: " + why, 1);
    guardian_ = std::make_unique<AttachGuardian>(pid);
    guard_injections(pid, guardian_.get());
    stopped_at_ = std::chrono::steady_clock::now();
    seize_all(ptrace_options);
    if (threads_.empty())
        throw UsageError("cannot attach: process " + std::to_string(pid) + " ended while rewind attached", 1);
    for (auto& t : threads_)
        step_out_of_vdso(t);
}

void Attachment::seize_all(long ptrace_options)
{
    std::set<pid_t> seized;
    std::vector<pid_t> order;
    // Threads the seized ones start meanwhile are seized by the kernel
    // (PTRACE_O_TRACECLONE); others may start before their creator is
    // seized: list again until no new one shows up.
    for (int round = 0; round < 1000; round++) {
        bool added = false;
        for (pid_t tid : task_ids(pid_)) {
            if (seized.count(tid))
                continue;
            if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void*>(ptrace_options)) != 0) {
                if (errno == ESRCH)
                    continue;
                int err = errno;
                std::string why = std::string(strerror(err));
                if (err == EPERM && yama_scope() == 1 && !has_capability(Capability::SysPtrace))
                    why += ": Yama's ptrace_scope is 1, which lets only a process's ancestors (or a tracer it "
                           "names with PR_SET_PTRACER) attach without CAP_SYS_PTRACE";
                else if (err == EPERM)
                    why += " (the process may have made itself non-dumpable, or is traced already)";
                for (pid_t s : seized)
                    ptrace(PTRACE_DETACH, s, nullptr, nullptr);
                throw UsageError("cannot attach to thread " + std::to_string(tid) + " of process " +
                                     std::to_string(pid_) + ": " + why,
                                 1);
            }
            ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
            seized.insert(tid);
            order.push_back(tid);
            added = true;
        }
        if (!added)
            break;
    }
    std::vector<pid_t> more;
    for (size_t i = 0; i < order.size(); i++)
        wait_stopped(order[i], more);
    for (pid_t tid : more)
        if (!seized.count(tid)) {
            seized.insert(tid);
            wait_stopped(tid, more);
            order.push_back(tid);
        }
    // The leader first: its thread makes the fork of the start image.
    std::stable_partition(order.begin(), order.end(), [&](pid_t t) { return t == pid_; });
    for (pid_t tid : order) {
        if (thread_state(tid) == 0 || !in_ptrace_stop(tid))
            continue;
        AttachedThread t;
        t.tid = tid;
        t.regs = get_registers(tid);
        t.restarted_call = out_of_syscall(tid, t.regs);
        threads_.push_back(t);
    }
}

void Attachment::wait_stopped(pid_t tid, std::vector<pid_t>& more)
{
    for (;;) {
        int status = 0;
        if (waitpid(tid, &status, __WALL) != tid)
            return;
        StopInfo s = decode_wait_status(status);
        switch (s.kind) {
        case StopInfo::Kind::Exited:
        case StopInfo::Kind::Signaled:
            return;
        case StopInfo::Kind::GroupStop:
            if (is_stop_signal(s.signal)) {
                // Stopped by job control just now: refuse, as for one stopped before.
                throw UsageError("cannot attach: process " + std::to_string(pid_) +
                                     " was stopped (job control) while rewind attached; continue it first",
                                 1);
            }
            return; // PTRACE_INTERRUPT's stop
        case StopInfo::Kind::PtraceEvent:
            if (s.event == PTRACE_EVENT_STOP)
                return;
            if (s.event == PTRACE_EVENT_CLONE) {
                more.push_back(static_cast<pid_t>(get_event_msg(tid)));
            } else if (s.event == PTRACE_EVENT_FORK || s.event == PTRACE_EVENT_VFORK) {
                // Another process, not recorded: let it go as soon as it stops.
                auto child = static_cast<pid_t>(get_event_msg(tid));
                int cs = 0;
                waitpid(child, &cs, __WALL);
                ptrace(PTRACE_DETACH, child, nullptr, nullptr);
            }
            break;
        case StopInfo::Kind::SignalDelivery:
            hold(tid, s.signal); // sent again once it is recorded
            break;
        case StopInfo::Kind::SyscallStop:
            break;
        }
        ptrace(PTRACE_CONT, tid, nullptr, nullptr);
    }
}

void Attachment::step_out_of_vdso(AttachedThread& t)
{
    if (!vdso_end_) {
        for (const auto& m : read_mappings(pid_))
            if (m.path == "[vdso]") {
                vdso_start_ = m.start;
                vdso_end_ = m.end;
            }
        if (!vdso_end_)
            return;
    }
    // A thread inside a time function would finish it from the kernel's
    // clock page, which no replay can read the same: it runs on to the caller.
    for (int steps = 0; steps < kMaxVdsoSteps; steps++) {
        uint64_t rip = t.regs[Registers::RIP];
        if (rip < vdso_start_ || rip >= vdso_end_ || is_syscall_instruction(t.tid, rip))
            return;
        if (ptrace(PTRACE_SINGLESTEP, t.tid, nullptr, nullptr) != 0)
            return;
        int status = 0;
        if (waitpid(t.tid, &status, __WALL) != t.tid)
            return;
        StopInfo s = decode_wait_status(status);
        if (s.kind == StopInfo::Kind::SignalDelivery && s.signal != SIGTRAP)
            hold(t.tid, s.signal);
        t.regs = get_registers(t.tid);
    }
}

void Attachment::prepare()
{
    insn_ = find_syscall_instruction(pid_);
    if (!insn_)
        throw std::runtime_error("no syscall instruction found in process " + std::to_string(pid_));
    for (auto& t : threads_) {
        ThreadInjector in(t.tid, insn_);
        __ptrace_rseq_configuration rseq{};
        if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, t.tid, reinterpret_cast<void*>(sizeof rseq), &rseq) > 0 &&
            rseq.rseq_abi_pointer) {
            int64_t r =
                in.call(SYS_rseq, rseq.rseq_abi_pointer, rseq.rseq_abi_size, RSEQ_FLAG_UNREGISTER, rseq.signature);
            if (r != 0)
                throw std::runtime_error("cannot unregister the rseq area of thread " + std::to_string(t.tid) + ": " +
                                         strerror(static_cast<int>(-r)));
            t.rseq_addr = rseq.rseq_abi_pointer;
            t.rseq_len = rseq.rseq_abi_size;
            t.rseq_sig = rseq.signature;
            guardian_->rseq(t.tid, t.rseq_addr, t.rseq_len, t.rseq_sig);
        }
        t.clear_child_tid = clear_child_tid_of(in);
        std::vector<uint8_t> mode(sizeof(int));
        if (in.call_with_output(SYS_prctl, 1, mode, PR_GET_TSC) == 0)
            std::memcpy(&t.tsc_mode, mode.data(), sizeof(int));
        if (int64_t r = in.call(SYS_prctl, PR_SET_TSC, PR_TSC_SIGSEGV); r != 0)
            throw std::runtime_error("cannot trap rdtsc in thread " + std::to_string(t.tid) + ": " +
                                     strerror(static_cast<int>(-r)));
        for (int sig : in.arrived())
            hold(t.tid, sig);
    }
    prepared_ = true;
    ThreadInjector leader(threads_.front().tid, insn_);
    personality_ = leader.call(SYS_personality, 0xffffffff);
    guardian_->personality(personality_);
    if (personality_ >= 0)
        leader.call(SYS_personality, static_cast<uint64_t>(personality_) | ADDR_NO_RANDOMIZE);
    if (vdso_end_) {
        vdso_bytes_.resize(vdso_end_ - vdso_start_);
        TraceeMemory mem(pid_);
        if (!mem.read(RemoteAddr(vdso_start_), vdso_bytes_))
            vdso_bytes_.clear();
        if (std::string why = patch_vdso_of(pid_); !why.empty())
            throw std::runtime_error(why);
    }
}

ImagePoint Attachment::point_now(const std::vector<std::pair<pid_t, int>>& stopped)
{
    ImagePoint at{pid_, {}, find_syscall_instruction(pid_)};
    if (stopped.empty())
        throw std::runtime_error("process " + std::to_string(pid_) + " has no thread left");
    if (!at.syscall_insn)
        throw std::runtime_error("no syscall instruction found in process " + std::to_string(pid_));
    insn_ = at.syscall_insn; // (an exec since the attach moved it)
    for (auto [tid, restarted] : stopped) {
        AttachedThread t;
        t.tid = tid;
        t.restarted_call = restarted;
        ThreadInjector in(tid, at.syscall_insn);
        t.clear_child_tid = clear_child_tid_of(in);
        for (int sig : in.arrived())
            hold(tid, sig);
        t.regs = get_registers(tid);
        at.threads.push_back(t);
    }
    std::stable_partition(at.threads.begin(), at.threads.end(), [&](const auto& t) { return t.tid == pid_; });
    reap_copy(at.threads.front().tid);
    return at;
}

pid_t Attachment::fork_copy(const ImagePoint& at)
{
    pid_t via = at.threads.front().tid;
    ThreadInjector leader(via, at.syscall_insn);
    // No exit signal: the process is never told of its copy.
    int64_t r = leader.call(SYS_clone, 0, 0, 0, 0, 0);
    for (int sig : leader.arrived())
        hold(via, sig);
    if (r <= 0)
        throw std::runtime_error("cannot fork a copy of process " + std::to_string(pid_) + ": " +
                                 strerror(static_cast<int>(-r)));
    auto copy = static_cast<pid_t>(r);
    guardian_->copy(copy); // (to end and reap, should rewind die before it does)
    int status = 0;
    if (waitpid(copy, &status, __WALL) != copy)
        throw std::runtime_error("the copy of process " + std::to_string(pid_) + " did not stop");
    ThreadInjector in(copy, at.syscall_insn);
    // Its descriptors are the process's sockets, pipes and terminals: the
    // copy lets go of them (the process keeps them), and the image has none.
    in.call(SYS_close_range, 0, ~0u, 0);
    // A session of its own: CRIU refuses a process whose session leader is
    // outside its pid namespace (as in most containers); the replay answers
    // the program's session calls from the log.
    in.call(SYS_setsid);
    privatize_shared_mappings(copy, at.syscall_insn);
    return copy;
}

void Attachment::privatize_shared_mappings(pid_t copy, uint64_t insn)
{
    // Memory the process shares (a file mapped MAP_SHARED, shared anonymous
    // memory, a System V segment) would be restored as that same memory:
    // a replay would write into the live file. The copy's are replaced by
    // private memory with the same content.
    for (const auto& m : read_mappings(copy))
        if (m.perms.size() >= 4 && m.perms[3] == 's' && m.path != "[vdso]" && m.path != "[vvar]" &&
            m.path != "[vvar_vclock]")
            make_private(copy, insn, m);
}

void Attachment::park_copy(pid_t copy)
{
    Registers regs = get_registers(copy);
    regs[Registers::RIP] = insn_;
    regs[Registers::RAX] = SYS_pause;
    regs[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
    set_registers(copy, regs);
    int status = 0;
    if (ptrace(PTRACE_SYSCALL, copy, nullptr, nullptr) != 0 || waitpid(copy, &status, __WALL) != copy ||
        decode_wait_status(status).kind != StopInfo::Kind::SyscallStop)
        throw std::runtime_error("the copy of process " + std::to_string(pid_) + " cannot be parked");
    ptrace(PTRACE_DETACH, copy, nullptr, nullptr);
}

void Attachment::discard_copy(pid_t copy)
{
    ::kill(copy, SIGKILL);
    int status = 0;
    waitpid(copy, &status, __WALL | WNOHANG); // (if it is still traced)
    copy_ = copy;
    guardian_->copy(copy);
    if (!released_)
        reap_copy(threads_.front().tid);
}

void Attachment::reap_copy(pid_t tid)
{
    if (!copy_)
        return;
    // Its parent is the process: reaped there, by a wait it never made.
    ThreadInjector in(tid, insn_);
    if (in.call(SYS_wait4, static_cast<uint64_t>(copy_), 0, __WALL, 0) == copy_)
        copy_ = 0;
    for (int sig : in.arrived())
        hold(tid, sig);
}

void Attachment::rseq_registered(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig)
{
    auto it = std::find_if(threads_.begin(), threads_.end(), [&](const auto& t) { return t.tid == tid; });
    if (it == threads_.end())
        return;
    it->rseq_addr = addr;
    it->rseq_len = len;
    it->rseq_sig = sig;
    guardian_->rseq(tid, addr, len, sig);
}

std::vector<std::string> Attachment::undo(const std::vector<pid_t>& tids)
{
    std::vector<std::string> problems;
    std::set<pid_t> processes;
    std::map<pid_t, std::vector<pid_t>> threads_of; // the stopped threads of each process
    for (pid_t tid : tids) {
        try {
            auto tgid = static_cast<pid_t>(proc_status_number(tid, "Tgid").value_or(tid));
            ThreadInjector in(tid, tgid == pid_ ? insn_ : find_syscall_instruction(tgid));
            auto it = std::find_if(threads_.begin(), threads_.end(), [&](const auto& t) { return t.tid == tid; });
            int mode = it != threads_.end() && it->tsc_mode ? it->tsc_mode : PR_TSC_ENABLE;
            in.call(SYS_prctl, PR_SET_TSC, static_cast<uint64_t>(mode));
            if (it != threads_.end() && it->rseq_addr)
                in.call(SYS_rseq, it->rseq_addr, it->rseq_len, 0, it->rseq_sig);
            // Once per process (its children inherited both from it).
            if (processes.insert(tgid).second) {
                if (tgid == pid_)
                    reap_copy(tid);
                if (personality_ >= 0)
                    in.call(SYS_personality, static_cast<uint64_t>(personality_));
            }
            threads_of[tgid].push_back(tid);
            for (int sig : in.arrived())
                hold(tid, sig);
        } catch (const std::exception& e) {
            problems.push_back("thread " + std::to_string(tid) + ": " + e.what());
        }
    }
    // The kernel's vDSO is one image: the original bytes go back into
    // every process of the tree, after the calls injected above (which may
    // run a syscall instruction of rewind's code).
    for (const auto& [tgid, threads] : threads_of)
        for (auto& p : put_back_vdso(tgid, threads, vdso_bytes_))
            problems.push_back(std::move(p));
    return problems;
}

Attachment::~Attachment()
{
    guard_injections(pid_, nullptr);
    if (released_)
        return;
    std::vector<pid_t> tids;
    for (const auto& t : threads_)
        tids.push_back(t.tid);
    if (prepared_)
        undo(tids);
    for (pid_t tid : tids)
        ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    for (auto [tid, sig] : held_)
        syscall(SYS_tgkill, pid_, tid, sig);
}

} // namespace rw
