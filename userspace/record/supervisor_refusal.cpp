// The recording filter's stops (recording_filter.h), and refusing what
// rewind cannot record.
//
// A ptrace or wait call goes to the stand-in for a tracer
// (supervisor_tracing.cpp). What cannot be recorded stops the recording at
// the call, before it runs: the supervisor ends the trace there with a note
// that says why, kills the recorded processes and reaps them; their deaths
// are rewind's doing, not the program's, and are left out of the trace.
#include <sys/ptrace.h>
#include <sys/wait.h>

#include <linux/audit.h>

#include <csignal>
#include <fstream>

#include "bpf_capture.h"
#include "recording_filter.h"
#include "supervisor.h"
#include "syscall_table.h"
#include "tracee.h"

namespace rw {
namespace {

using Clock = std::chrono::steady_clock;

// How long the recorded processes may take to die of SIGKILL (one stuck in
// an uninterruptible wait, on a dead NFS server, takes as long as that).
constexpr std::chrono::seconds kDeathTimeout{10};

std::string command_name(Tid tid)
{
    std::ifstream in("/proc/" + std::to_string(tid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
}

std::string who(Tid tid, Tid tgid)
{
    std::string name = command_name(tgid);
    std::string process = "process " + std::to_string(tgid) + (name.empty() ? "" : " (" + name + ")");
    return tid == tgid ? process : "thread " + std::to_string(tid) + " of " + process;
}

std::string call_name(const __ptrace_syscall_info& info)
{
    if (info.arch == AUDIT_ARCH_X86_64)
        return syscall_name(static_cast<int>(info.seccomp.nr));
    return "32-bit system call " + std::to_string(info.seccomp.nr);
}

} // namespace

void Supervisor::on_seccomp_stop(Thread& t)
{
    __ptrace_syscall_info info{};
    if (::ptrace(PTRACE_GET_SYSCALL_INFO, t.tid, sizeof(info), &info) <= 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GET_SYSCALL_INFO " + std::to_string(t.tid));
    if (info.op != PTRACE_SYSCALL_INFO_SECCOMP)
        throw std::runtime_error("thread " + std::to_string(t.tid) + ": a seccomp stop that is not one");
    if (info.arch == AUDIT_ARCH_X86_64 && info.seccomp.ret_data == kPtraceCall) {
        uint64_t args[6];
        std::copy(std::begin(info.seccomp.args), std::end(info.seccomp.args), args);
        on_ptrace_call(t, args);
        return;
    }
    if (info.arch == AUDIT_ARCH_X86_64 && info.seccomp.ret_data == kWaitCall) {
        on_wait_call(t);
        return;
    }
    if (info.seccomp.ret_data == kTracingRefused) {
        refuse(t, who(t.tid, t.tgid) + " called ptrace through the 32-bit system call interface: rewind stands in "
                                       "for a recorded tracer only through the 64-bit one");
        return;
    }
    // A seccomp filter of the program's own asked for a tracer. Natively,
    // with none, the call fails with ENOSYS; here the stop comes to rewind
    // (it takes seccomp stops for its own filter), which could fail the call
    // only by skipping it as a tracer does, and the kernel side would record
    // a skipped call as syscall -1. Such a filter is there for a tracer of
    // the program's own, which rewind would refuse anyway.
    refuse(t, who(t.tid, t.tgid) + " made the system call " + call_name(info) +
                  ", which its own seccomp filter hands to a tracer (SECCOMP_RET_TRACE): rewind cannot record a "
                  "program that relies on a tracer of its own");
}

void Supervisor::refuse_request(Thread& t, const std::string& request, const std::string& why)
{
    refuse(t, who(t.tid, t.tgid) + " called ptrace(" + request + "): " + why);
}

void Supervisor::refuse(Thread& t, std::string why)
{
    // Everything before the call is in the trace; the note ends it.
    capture_.drain();
    NoteEvent note;
    note.seq = capture_.next_seq();
    note.tid = t.tid;
    note.kind = NoteKind::Incomplete;
    note.message = "rewind record stopped the program: " + why;
    refusal_ = Refusal{t.tid, std::move(why), note.seq};
    refused_at_ = Clock::now();
    if (options_.end_trace_with)
        options_.end_trace_with(std::move(note));
    else
        emit(std::move(note));
    // The refused thread stays stopped at the call's entry; SIGKILL ends it
    // there, before the call runs, and every other recorded process with it.
    for (const auto& [tid, other] : threads_)
        ::kill(other.tgid, SIGKILL);
    ::kill(t.tgid, SIGKILL);
}

void Supervisor::on_stop_after_refusal(pid_t tid, int status)
{
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
        threads_.erase(tid);
        if (tid == initial_)
            initial_status_ = status;
        return;
    }
    // A process that was still being born (its first stop) when the others
    // were killed, or a thread stopped before its SIGKILL came.
    ::kill(tid, SIGKILL);
}

bool Supervisor::refusal_outlived()
{
    if (Clock::now() - refused_at_ < kDeathTimeout)
        return false;
    std::string left;
    for (const auto& [tid, t] : threads_)
        left += " " + std::to_string(tid);
    problems_.push_back("after the refusal, these recorded threads had not died " +
                        std::to_string(kDeathTimeout.count()) + " s after SIGKILL:" + left +
                        " (rewind stopped waiting for them)");
    return true;
}

} // namespace rw
