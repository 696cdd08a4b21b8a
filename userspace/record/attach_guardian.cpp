#include "attach_guardian.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <thread>
#include <vector>

#include "attach.h"
#include "process_image.h"
#include "thread_injector.h"
#include "tracee.h"

namespace rw {
namespace {

constexpr auto kTracerGone = std::chrono::seconds(10);

// What the guardian was told.
struct Changes {
    struct InFlight {
        uint64_t at; // the syscall instruction it runs
        Registers saved;
    };
    std::map<pid_t, InFlight> in_flight; // injected calls not finished
    struct Rseq {
        uint64_t addr;
        uint32_t len, sig;
    };
    std::map<pid_t, Rseq> rseq;
    int64_t personality = -1;
    std::map<uint64_t, uint8_t> int3s; // of the process itself
    pid_t copy = 0;
    bool bye = false;
};

void take(Changes& c, const std::string& line, pid_t target)
{
    std::istringstream in(line);
    std::string what;
    in >> what;
    if (what == "bye") {
        c.bye = true;
    } else if (what == "inject") {
        pid_t tid = 0;
        Changes::InFlight f{};
        in >> tid >> f.at;
        for (auto& w : f.saved.words)
            in >> w;
        if (in)
            c.in_flight[tid] = f;
    } else if (what == "done") {
        pid_t tid = 0;
        in >> tid;
        c.in_flight.erase(tid);
    } else if (what == "rseq") {
        pid_t tid = 0;
        Changes::Rseq r{};
        in >> tid >> r.addr >> r.len >> r.sig;
        c.rseq[tid] = r;
    } else if (what == "persona") {
        in >> c.personality;
    } else if (what == "copy") {
        in >> c.copy;
    } else if (what == "int3") {
        pid_t tgid = 0;
        uint64_t addr = 0;
        unsigned byte = 0;
        in >> tgid >> addr >> byte;
        if (tgid == target)
            c.int3s[addr] = static_cast<uint8_t>(byte);
    }
}

void put_back(const Changes& c, pid_t target, pid_t recorder)
{
    // The kernel lets the threads go only once the recorder's exit has
    // closed its files (the pipe): wait until none is its tracee.
    auto deadline = std::chrono::steady_clock::now() + kTracerGone;
    for (;;) {
        bool traced = false;
        for (pid_t tid : task_ids(target))
            traced = traced || proc_status_number(tid, "TracerPid").value_or(0) == recorder;
        if (!traced || std::chrono::steady_clock::now() > deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::vector<pid_t> seized;
    for (pid_t tid : task_ids(target))
        if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) == 0) {
            ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr);
            seized.push_back(tid);
        }
    bool stopped = false; // by a stall's SIGSTOP
    std::vector<pid_t> ready;
    for (pid_t tid : seized) {
        for (;;) {
            int status = 0;
            if (waitpid(tid, &status, __WALL) != tid)
                break;
            StopInfo s = decode_wait_status(status);
            if (s.kind == StopInfo::Kind::Exited || s.kind == StopInfo::Kind::Signaled)
                break;
            if (s.kind == StopInfo::Kind::SignalDelivery && s.signal != SIGSTOP) {
                // Not ours: delivered, and the interrupt comes after.
                ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void*>(long(s.signal)));
                continue;
            }
            if (s.kind == StopInfo::Kind::SignalDelivery ||
                (s.kind == StopInfo::Kind::GroupStop && s.signal == SIGSTOP))
                stopped = true;
            ready.push_back(tid);
            break;
        }
    }
    uint64_t insn = find_syscall_instruction(target);
    std::vector<uint8_t> vdso;
    uint64_t vdso_start = 0;
    for (const auto& m : read_mappings(getpid()))
        if (m.path == "[vdso]") {
            vdso.resize(m.end - m.start);
            TraceeMemory(getpid()).read(RemoteAddr(m.start), vdso);
        }
    for (const auto& m : read_mappings(target))
        if (m.path == "[vdso]" && m.end - m.start == vdso.size())
            vdso_start = m.start;
    for (pid_t tid : ready) {
        try {
            // Only a thread still at the injected call: one whose call ended
            // (the "done" lost with rewind) is not put back in time.
            if (auto it = c.in_flight.find(tid); it != c.in_flight.end()) {
                uint64_t rip = get_registers(tid)[Registers::RIP];
                if (rip == it->second.at || rip == it->second.at + 2)
                    set_registers(tid, it->second.saved);
            }
            put_before_syscall(tid);
            ThreadInjector in(tid, insn);
            in.call(SYS_prctl, PR_SET_TSC, PR_TSC_ENABLE);
            if (auto it = c.rseq.find(tid); it != c.rseq.end())
                in.call(SYS_rseq, it->second.addr, it->second.len, 0, it->second.sig);
            if (tid == target && c.personality >= 0)
                in.call(SYS_personality, static_cast<uint64_t>(c.personality));
            if (tid == target && c.copy) {
                kill(c.copy, SIGKILL);
                in.call(SYS_wait4, static_cast<uint64_t>(c.copy), 0, __WALL, 0);
            }
        } catch (const std::exception&) {
        }
    }
    if (!ready.empty()) {
        TraceeMemory mem(ready.front());
        if (vdso_start)
            mem.write(RemoteAddr(vdso_start), vdso);
        for (auto [addr, byte] : c.int3s)
            mem.write(RemoteAddr(addr), std::span<const uint8_t>(&byte, 1));
    }
    for (pid_t tid : ready)
        ptrace(PTRACE_DETACH, tid, nullptr, nullptr);
    if (stopped)
        kill(target, SIGCONT);
}

} // namespace

void run_guardian(int fd, pid_t target, pid_t recorder)
{
    Changes c;
    std::string pending;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        pending.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
            take(c, pending.substr(0, nl), target);
    }
    if (!c.bye)
        put_back(c, target, recorder);
    _exit(0);
}

AttachGuardian::AttachGuardian(pid_t target)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe for the attach guardian");
    pid_t recorder = getpid();
    pid_t child = fork();
    if (child < 0)
        throw std::system_error(errno, std::generic_category(), "fork of the attach guardian");
    if (child == 0) {
        // Not rewind's child (its waits take every child's end), and out
        // of its session: Ctrl-C and a hangup are rewind's to handle.
        if (fork() != 0)
            _exit(0);
        setsid();
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT})
            signal(sig, SIG_IGN);
        // Nothing of rewind's: its eBPF links and maps above all, which
        // would keep the capture (and its stalls) alive after rewind.
        int keep = fds[0];
        if (keep > 0)
            syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u);
        syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
        run_guardian(fds[0], target, recorder);
    }
    int status = 0;
    waitpid(child, &status, 0);
    close(fds[0]);
    fd_ = fds[1];
}

AttachGuardian::~AttachGuardian()
{
    say("bye");
    close(fd_);
}

void AttachGuardian::say(const std::string& line)
{
    std::string l = line + "\n";
    [[maybe_unused]] ssize_t n = ::write(fd_, l.data(), l.size());
}

void AttachGuardian::injecting(pid_t tid, const Registers& saved, uint64_t at)
{
    std::string line = "inject " + std::to_string(tid) + " " + std::to_string(at);
    for (uint64_t w : saved.words)
        line += " " + std::to_string(w);
    say(line);
}

void AttachGuardian::injected(pid_t tid)
{
    say("done " + std::to_string(tid));
}

void AttachGuardian::rseq(pid_t tid, uint64_t addr, uint32_t len, uint32_t sig)
{
    say("rseq " + std::to_string(tid) + " " + std::to_string(addr) + " " + std::to_string(len) + " " +
        std::to_string(sig));
}

void AttachGuardian::personality(int64_t value)
{
    say("persona " + std::to_string(value));
}

void AttachGuardian::copy(pid_t pid)
{
    say("copy " + std::to_string(pid));
}

void AttachGuardian::int3(pid_t tgid, uint64_t addr, uint8_t replaced)
{
    say("int3 " + std::to_string(tgid) + " " + std::to_string(addr) + " " + std::to_string(replaced));
}

} // namespace rw
