#include "tracee.h"

#include "positional_io.h"
#include "unique_fd.h"

#include <fcntl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>
#include <unordered_map>

namespace rw {
namespace {

UniqueFd open_proc_mem(pid_t tid, int flags)
{
    std::string path = "/proc/" + std::to_string(tid) + "/mem";
    return UniqueFd(::open(path.c_str(), flags | O_CLOEXEC));
}

// /proc/PID/mem files kept open for write_code, by tid: a replay plants and
// lifts a breakpoint at every synchronization call. A file stays bound to
// the address space it was opened in, so it is dropped when its task execs
// or ends (forget_code_file), and reopened once if a write through it fails
// (a task gone unseen, its tid reused).
class CodeFiles {
public:
    int get(pid_t tid)
    {
        std::lock_guard lock(mutex_);
        auto it = files_.find(tid);
        if (it != files_.end())
            return it->second.get();
        if (files_.size() >= kMaxOpen)
            files_.clear();
        UniqueFd fd = open_proc_mem(tid, O_RDWR);
        if (!fd)
            return -1;
        return files_.emplace(tid, std::move(fd)).first->second.get();
    }
    void forget(pid_t tid)
    {
        std::lock_guard lock(mutex_);
        files_.erase(tid);
    }

private:
    static constexpr size_t kMaxOpen = 256;
    std::mutex mutex_;
    std::unordered_map<pid_t, UniqueFd> files_;
};

CodeFiles& code_files()
{
    static CodeFiles files;
    return files;
}

} // namespace

void forget_code_file(pid_t tid)
{
    code_files().forget(tid);
}

size_t TraceeMemory::read_partial(RemoteAddr addr, std::span<uint8_t> out) const
{
    size_t done = 0;
    while (done < out.size()) {
        struct iovec local = {out.data() + done, out.size() - done};
        struct iovec remote = {reinterpret_cast<void*>(addr.value + done), out.size() - done};
        ssize_t n = ::process_vm_readv(tid_, &local, 1, &remote, 1, 0);
        if (n <= 0)
            break;
        done += static_cast<size_t>(n);
    }
    if (done == out.size())
        return done;
    UniqueFd mem = open_proc_mem(tid_, O_RDONLY);
    if (!mem)
        return done;
    ssize_t n = pread_full(mem.get(), out.data() + done, out.size() - done, addr.value + done);
    return n > 0 ? done + static_cast<size_t>(n) : done;
}

bool TraceeMemory::read(RemoteAddr addr, std::span<uint8_t> out) const
{
    return read_partial(addr, out) == out.size();
}

std::optional<std::string> TraceeMemory::read_string(RemoteAddr addr, size_t max) const
{
    std::string s;
    uint8_t buf[256];
    while (s.size() < max) {
        // Never cross a page boundary in one read: the next page may be unmapped.
        size_t to_page = 4096 - ((addr.value + s.size()) & 4095);
        size_t want = std::min({sizeof(buf), to_page, max - s.size()});
        size_t got = read_partial(addr + s.size(), {buf, want});
        if (got == 0)
            return std::nullopt;
        for (size_t i = 0; i < got; i++) {
            if (buf[i] == 0)
                return s;
            s.push_back(static_cast<char>(buf[i]));
        }
    }
    return s;
}

bool TraceeMemory::write(RemoteAddr addr, std::span<const uint8_t> data) const
{
    // Most writes land in writable memory (a buffer a syscall filled):
    // one process_vm_writev. The rest goes through /proc/PID/mem, which
    // also reaches read-only pages; opened for this write only, as the
    // recorder, which never drops write_code's files, calls this too.
    size_t done = 0;
    while (done < data.size()) {
        struct iovec local = {const_cast<uint8_t*>(data.data()) + done, data.size() - done};
        struct iovec remote = {reinterpret_cast<void*>(addr.value + done), data.size() - done};
        ssize_t n = ::process_vm_writev(tid_, &local, 1, &remote, 1, 0);
        if (n <= 0)
            break;
        done += static_cast<size_t>(n);
    }
    if (done == data.size())
        return true;
    UniqueFd mem = open_proc_mem(tid_, O_RDWR);
    return mem && pwrite_full(mem.get(), data.data() + done, data.size() - done, addr.value + done);
}

bool TraceeMemory::write_code(RemoteAddr addr, std::span<const uint8_t> data) const
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fd = code_files().get(tid_);
        if (fd < 0)
            return false;
        if (pwrite_full(fd, data.data(), data.size(), addr.value))
            return true;
        code_files().forget(tid_);
    }
    return false;
}

static_assert(sizeof(user_regs_struct) == Registers::kCount * 8);

Registers get_registers(pid_t tid)
{
    Registers r;
    if (::ptrace(PTRACE_GETREGS, tid, nullptr, r.words.data()) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GETREGS " + std::to_string(tid));
    return r;
}

void set_registers(pid_t tid, const Registers& regs)
{
    if (::ptrace(PTRACE_SETREGS, tid, nullptr, regs.words.data()) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_SETREGS " + std::to_string(tid));
}

siginfo_t get_siginfo(pid_t tid)
{
    siginfo_t si{};
    if (::ptrace(PTRACE_GETSIGINFO, tid, nullptr, &si) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GETSIGINFO " + std::to_string(tid));
    return si;
}

void set_siginfo(pid_t tid, const siginfo_t& info)
{
    if (::ptrace(PTRACE_SETSIGINFO, tid, nullptr, &info) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_SETSIGINFO " + std::to_string(tid));
}

unsigned long get_event_msg(pid_t tid)
{
    unsigned long msg = 0;
    if (::ptrace(PTRACE_GETEVENTMSG, tid, nullptr, &msg) != 0)
        throw std::system_error(errno, std::generic_category(), "PTRACE_GETEVENTMSG " + std::to_string(tid));
    return msg;
}

bool stops_within(pid_t tid, std::chrono::milliseconds limit)
{
    auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        int status = 0;
        pid_t r = waitpid(tid, &status, __WALL | WNOHANG);
        if (r == tid)
            return WIFSTOPPED(status);
        if (r < 0 || std::chrono::steady_clock::now() >= deadline)
            return false;
        usleep(1000);
    }
}

bool in_ptrace_stop(pid_t tid)
{
    errno = 0;
    ::ptrace(PTRACE_PEEKUSER, tid, nullptr, nullptr);
    return errno != ESRCH;
}

char thread_state(pid_t tid)
{
    // /proc/TID/stat names a thread of any process; the state follows the
    // command name, which may hold spaces and parentheses.
    std::string path = "/proc/" + std::to_string(tid) + "/stat";
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char buf[512];
    ssize_t n = fd.get() < 0 ? -1 : ::read(fd.get(), buf, sizeof buf - 1);
    if (n <= 0)
        return 0;
    std::string_view line(buf, static_cast<size_t>(n));
    size_t paren = line.rfind(')');
    return paren != std::string_view::npos && paren + 2 < line.size() ? line[paren + 2] : 0;
}

std::optional<uint64_t> get_sigmask(pid_t tid)
{
    uint64_t mask = 0;
    if (::ptrace(PTRACE_GETSIGMASK, tid, sizeof mask, &mask) != 0)
        return std::nullopt;
    return mask;
}

bool is_syscall_instruction(pid_t tid, uint64_t rip)
{
    uint8_t code[2] = {};
    if (TraceeMemory(tid).read_partial(RemoteAddr(rip), code) < 2)
        return true; // unreadable: do not step into the unknown
    return (code[0] == 0x0f && (code[1] == 0x05 || code[1] == 0x34)) || (code[0] == 0xcd && code[1] == 0x80);
}

bool blocks_sigtrap(pid_t tid)
{
    auto mask = get_sigmask(tid);
    return mask && (*mask & signal_bit(SIGTRAP)) != 0;
}

bool set_sigmask(pid_t tid, uint64_t mask)
{
    return ::ptrace(PTRACE_SETSIGMASK, tid, sizeof mask, &mask) == 0;
}

StopInfo decode_wait_status(int status)
{
    StopInfo s;
    s.raw = status;
    if (WIFEXITED(status)) {
        s.kind = StopInfo::Kind::Exited;
        s.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        s.kind = StopInfo::Kind::Signaled;
        s.signal = WTERMSIG(status);
    } else {
        s.signal = WSTOPSIG(status);
        int event = (status >> 16) & 0xff;
        if (event == PTRACE_EVENT_STOP) {
            s.kind = StopInfo::Kind::GroupStop;
            s.event = event;
        } else if (event) {
            s.kind = StopInfo::Kind::PtraceEvent;
            s.event = event;
        } else if (s.signal == (SIGTRAP | 0x80)) {
            s.kind = StopInfo::Kind::SyscallStop;
            s.signal = SIGTRAP;
        } else {
            s.kind = StopInfo::Kind::SignalDelivery;
        }
    }
    return s;
}

bool same_registers(const Registers& a, const Registers& b)
{
    for (size_t i = 0; i < Registers::kCount; i++) {
        uint64_t x = a.words[i], y = b.words[i];
        if (i == Registers::EFLAGS) {
            x &= ~kResumeFlag;
            y &= ~kResumeFlag;
        }
        if (x != y)
            return false;
    }
    return true;
}

uint64_t perf_data(const siginfo_t& info)
{
    // _sigfault: si_addr at offset 16, then the _perf union member whose
    // first field is the 64-bit sig_data.
    uint64_t data;
    std::memcpy(&data, reinterpret_cast<const char*>(&info) + 24, sizeof(data));
    return data;
}

} // namespace rw
