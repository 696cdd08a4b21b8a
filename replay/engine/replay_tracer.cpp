// A recorded tracer's requests that change its tracee (its memory, its
// registers, its debug registers): the recorder made them on the tracee in
// the recording (supervisor_tracing.cpp), and replay makes them on the
// replayed tracee at the same point of the trace. The tracee is there: it
// stands where its last event left it (a syscall's exit, or the point in
// user code the recorder recorded for its stop), and the tracer's arguments
// are in the tracer's replayed memory, which the trace's inputs checked.
#include <asm/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "replay_error.h"
#include "replayer.h"
#include "syscall_table.h"
#include "text.h"

namespace rw::replay {
namespace {

constexpr size_t kMaxRegset = 64 * 1024;

} // namespace

void Replayer::apply_tracer_request(Task& tracer, const SyscallEvent& e)
{
    if (e.nr != SYS_ptrace || e.ret != 0)
        return;
    long request = static_cast<long>(e.args[0]);
    uint64_t addr = e.args[2], data = e.args[3];
    bool changes = request == PTRACE_POKETEXT || request == PTRACE_POKEDATA || request == PTRACE_POKEUSER ||
                   request == PTRACE_SETREGS || request == PTRACE_SETFPREGS || request == PTRACE_SETREGSET ||
                   request == PTRACE_SET_THREAD_AREA ||
                   (request == PTRACE_ARCH_PRCTL && data != ARCH_GET_FS && data != ARCH_GET_GS);
    if (!changes)
        return;
    Task& tracee = task(static_cast<Tid>(static_cast<pid_t>(e.args[1])));
    TraceeMemory mem = tracer.memory();
    auto failed = [&](const std::string& what) {
        diverge(tracer, "cannot do to its tracee what " + syscall_name(e.nr) + "(" + std::to_string(e.args[0]) + ", " +
                            std::to_string(e.args[1]) + ") did in the recording: " + what);
    };
    auto read = [&](uint64_t at, size_t size) {
        std::vector<uint8_t> buf(size);
        if (!mem.read(RemoteAddr(at), buf))
            failed("its argument at " + hex(at) + " is not readable");
        return buf;
    };
    auto real = [&](long req, uint64_t a, void* d) {
        if (::ptrace(static_cast<__ptrace_request>(req), tracee.tid(), a, d) != 0)
            failed(std::strerror(errno));
        // (Whatever it changed, the registers are read again.)
        tracee.set_regs(get_registers(tracee.tid()));
    };
    switch (request) {
    case PTRACE_SETREGS: {
        auto buf = read(data, sizeof(user_regs_struct));
        Registers r;
        static_assert(sizeof(r.words) == sizeof(user_regs_struct));
        std::memcpy(r.words.data(), buf.data(), buf.size());
        tracee.set_regs(r);
        break;
    }
    case PTRACE_POKEUSER:
        if (addr < sizeof(user_regs_struct) && addr % 8 == 0) {
            Registers r = tracee.regs();
            r.words[addr / 8] = data;
            tracee.set_regs(r);
        } else {
            real(request, addr, reinterpret_cast<void*>(data));
        }
        break;
    case PTRACE_POKETEXT:
    case PTRACE_POKEDATA:
    case PTRACE_ARCH_PRCTL:
        real(request, addr, reinterpret_cast<void*>(data));
        break;
    case PTRACE_SETFPREGS:
    case PTRACE_SET_THREAD_AREA: {
        auto buf = read(data, request == PTRACE_SETFPREGS ? sizeof(user_fpregs_struct) : 16);
        real(request, addr, buf.data());
        break;
    }
    case PTRACE_SETREGSET: {
        auto iov_bytes = read(data, sizeof(iovec));
        iovec iov;
        std::memcpy(&iov, iov_bytes.data(), sizeof iov);
        auto buf = read(reinterpret_cast<uint64_t>(iov.iov_base), std::min(iov.iov_len, kMaxRegset));
        iovec local{buf.data(), buf.size()};
        real(request, addr, &local);
        break;
    }
    default:
        break;
    }
}

void Replayer::apply_process_write(Task& writer, const SyscallEvent& e)
{
    // A write through another process's /proc/PID/mem (a debugger's
    // breakpoint, say): the bytes it wrote go into the replayed process.
    long pid = 0;
    if (!e.file || std::sscanf(e.file->path.c_str(), "/proc/%ld/mem", &pid) != 1)
        throw ReplayError(ReplayErrorKind::Damaged, current_, writer.recorded_tid(),
                          "the trace's record of " + syscall_name(e.nr) +
                              " into another process's memory names no process");
    Task& target = task(static_cast<Tid>(pid));
    TraceeMemory mem = target.memory();
    uint64_t at = e.file_offset, left = e.ret > 0 ? static_cast<uint64_t>(e.ret) : 0;
    for (const auto& m : e.memory) {
        if (m.dir != Direction::In || m.unreadable || left == 0)
            continue;
        if (m.hashed_only)
            diverge(writer, "the trace keeps only a hash of what " + syscall_name(e.nr) + " wrote into process " +
                                std::to_string(pid));
        size_t n = std::min<uint64_t>(left, m.bytes.size());
        if (!mem.write(RemoteAddr(at), {m.bytes.data(), n}))
            diverge(writer, syscall_name(e.nr) + " wrote into process " + std::to_string(pid) + " at " + hex(at) +
                                ", which is not mapped there in the replay");
        at += n;
        left -= n;
    }
}

} // namespace rw::replay
