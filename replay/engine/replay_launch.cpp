// Starting the recorded program and following its execs: the same image,
// the same limits, the same descriptors as when it was recorded.
#include "replayer.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <elf.h>

#include "launcher.h"
#include "replay_limits.h"
#include "event_format.h"
#include "process_image.h"
#include "text.h"
#include "vdso.h"

namespace rw::replay {
namespace fs = std::filesystem;

std::vector<BindMount> Replayer::binds_for(const ExecEvent& e, bool skip_mounted) const
{
    std::vector<BindMount> binds;
    for (const MountedFile& f : mapped_copies(e)) {
        // The same copy mounted again over itself would change nothing the
        // program sees, but CRIU cannot save files on overmounted mounts.
        if (skip_mounted && std::find(mounted_.begin(), mounted_.end(), f) != mounted_.end())
            continue;
        binds.push_back({f.target, checked_copy(e.tid, f.content_hash, f.target)});
    }
    return binds;
}

void Replayer::launch(const ExecEvent& first)
{
    std::vector<BindMount> binds = binds_for(first);
    for (const auto& b : binds)
        if (!fs::exists(b.source))
            refuse(first.tid, "the trace's copy of " + b.target + " is missing (" + b.source + ")");
    const TraceMeta& meta = trace_.meta();
    auto prepare = [&]() -> std::string {
        if (std::string err = enter_private_mount_namespace(); !err.empty())
            return err;
        if (std::string err = apply_bind_mounts(binds); !err.empty())
            return err;
        if (::chdir(meta.cwd.c_str()) != 0) {
            int err = errno;
            // A program named from there cannot be found anywhere else.
            if (!first.filename.starts_with("/"))
                return "cannot enter the recorded working directory " + meta.cwd + " (" + strerror(err) +
                       "), from which the program is named";
            ::chdir("/");
        }
        for (const auto& r : meta.rlimits) {
            struct rlimit l = {r.cur, r.max};
            setrlimit(static_cast<__rlimit_resource>(r.resource), &l);
        }
        // Nothing the program does reaches the outside world: its reads and
        // writes are served from the log.
        int null = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
        if (null > 2)
            ::close(null);
        // Whatever launched the replay (gdb, an IDE, a socket) is not the
        // program's: its fds come from the log.
        ::syscall(SYS_close_range, 3u, ~0u, CLOSE_RANGE_CLOEXEC);
        // A session of its own: CRIU refuses to save a landmark of a process
        // whose session leader is outside its pid namespace (as in most
        // containers), and a terminal's job control is not the program's
        // (its session and process-group calls are answered from the log).
        ::setsid();
        return disable_aslr_and_trap_tsc();
    };
    // The exec event holds the argv the new image saw; for a #! script the
    // kernel rewrote it (interpreter first), so the launch repeats the argv
    // the recorder passed to execve instead.
    const std::vector<std::string>& argv = meta.argv.empty() ? first.argv : meta.argv;
    Launcher launcher(first.filename, argv, first.envp, meta.signals, prepare);
    if (ptrace(PTRACE_SEIZE, launcher.pid(), nullptr, reinterpret_cast<void*>(kReplayPtraceOptions)) != 0)
        refuse(first.tid, std::string("cannot trace the replayed program: ") + strerror(errno));
    auto group = std::make_shared<ThreadGroup>();
    group->recorded_tgid = first.tgid;
    group->tgid = launcher.pid();
    group->fds = std::make_shared<StdioFds>(StdioFds::inherited());
    auto vm = std::make_shared<AddressSpace>();
    vm->id = next_vm_id_++;
    Task& t = add_task(launcher.pid(), first.tid, group, vm);
    t.at = Task::At::Running;
    initial_tid_ = first.tid;
    launched_ = true;
    note_mounts(first);
    if (std::string err = launcher.release(); !err.empty())
        refuse(first.tid, "cannot start the replay of " + first.filename +
                              (first.filename.starts_with("/") ? "" : " (in " + meta.cwd + ")") + ": " + err);
}

void Replayer::on_exec(const ExecEvent& e)
{
    if (auto why = replay_limit(e))
        refuse(e.tid, *why);
    StopInfo s;
    Task* exec = nullptr;
    if (!launched_) {
        launch(e);
        exec = &task(e.tid);
        s = wait_stop(*exec, "the new image of execve(\"" + e.filename + "\")");
    } else {
        Task& caller = task(e.former_tid ? e.former_tid : e.tid);
        exec = &caller;
        collect_fresh(caller);
        std::vector<BindMount> binds = binds_for(e, true);
        if (std::string err = apply_bind_mounts_in(caller.tid(), binds); !err.empty())
            refuse(e.tid, "preparing the files of execve(" + e.filename + "): " + err);
        note_mounts(e);
        enter_exec(caller, e);
        // Their exits came first, the kernel's own order: they stand where
        // those left them, and die now.
        std::vector<Task*> ended = siblings_ended_by_exec(caller);
        resume(caller, Resume::Syscall);
        s = wait_exec_stop(caller, e);
        if (s.kind == StopInfo::Kind::PtraceEvent && s.event == PTRACE_EVENT_EXEC) {
            collect_ended_by_exec(ended, e);
            auto vm = std::make_shared<AddressSpace>(); // the old one stays with a vfork parent
            vm->id = next_vm_id_++;
            caller.move_to(std::move(vm));
        }
    }
    Task& t = *exec;
    if (s.kind != StopInfo::Kind::PtraceEvent || s.event != PTRACE_EVENT_EXEC)
        diverge(t, "execve(\"" + e.filename + "\") did not succeed: got " + describe_stop(t, s));
    check_exec_image(t, e);
    t.clear_child_tid = 0; // exec releases both
    t.alt_stack = false;
    t.at = Task::At::ExecutingCall;
    // The exec releases a vfork parent. Had it still waited, the parent's
    // return would run the child's events after the exec ahead of other
    // processes' (a make -j2 trace replayed a whole assembler run early).
    for (auto& [tid, other] : tasks_)
        if (other->vfork_child == e.tid)
            other->vfork_child = 0;
}

void Replayer::check_exec_image(Task& t, const ExecEvent& e)
{
    TraceeMemory mem = t.memory();
    Registers regs = t.regs();
    auto stack = read_initial_stack(mem, regs[Registers::RSP]);
    if (!stack)
        diverge(t, "cannot read the initial stack after execve");
    // As the recording did: its time calls patched into syscalls, or (a
    // trace of an older rewind) the vDSO hidden.
    bool recorded_vdso = false;
    for (size_t i = 0; i + 1 < e.auxv.size(); i += 2)
        recorded_vdso = recorded_vdso || e.auxv[i] == AT_SYSINFO_EHDR;
    if (!recorded_vdso && !hide_vdso(mem, *stack))
        diverge(t, "cannot hide the vDSO after execve");
    if (recorded_vdso) {
        if (std::string why = patch_vdso(mem, *stack); !why.empty())
            diverge(t, why + " after execve");
    }
    if (auto random = stack->aux(AT_RANDOM))
        mem.write(RemoteAddr(*random), e.at_random);
    // The replay runs with rewind's own credentials (the syscalls that
    // changed them are emulated): the recorded ones go where the program
    // and its loader read them.
    for (size_t i = 0; i + 1 < stack->auxv.size() && i + 1 < e.auxv.size(); i += 2)
        if (stack->auxv[i] == e.auxv[i] && is_credential_aux(e.auxv[i]) && stack->auxv[i + 1] != e.auxv[i + 1]) {
            uint64_t value = e.auxv[i + 1];
            mem.write(RemoteAddr(stack->auxv_addr + (i + 1) * sizeof(uint64_t)),
                      {reinterpret_cast<const uint8_t*>(&value), sizeof value});
            stack->auxv[i + 1] = value;
        }
    std::string details;
    if (stack->argv != e.argv)
        details += "  argv differs\n";
    if (stack->envp != e.envp)
        details += "  environment differs\n";
    if (stack->auxv != e.auxv) {
        for (size_t i = 0; i + 1 < std::max(stack->auxv.size(), e.auxv.size()); i += 2) {
            uint64_t k1 = i < e.auxv.size() ? e.auxv[i] : 0, v1 = i + 1 < e.auxv.size() ? e.auxv[i + 1] : 0;
            uint64_t k2 = i < stack->auxv.size() ? stack->auxv[i] : 0,
                     v2 = i + 1 < stack->auxv.size() ? stack->auxv[i + 1] : 0;
            if (k1 != k2 || v1 != v2) {
                char buf[160];
                std::snprintf(buf, sizeof(buf), "  auxiliary vector: recorded %llu=%#llx, replay %llu=%#llx\n",
                              (unsigned long long)k1, (unsigned long long)v1, (unsigned long long)k2,
                              (unsigned long long)v2);
                details += buf;
                break;
            }
        }
    }
    if (regs[Registers::RSP] != e.regs[Registers::RSP] || regs[Registers::RIP] != e.regs[Registers::RIP])
        details += "  initial stack pointer or entry point differs (different program or memory layout)\n";
    auto maps = read_mappings(t.tid());
    auto strip = [](std::string p) {
        if (auto pos = p.rfind(" (deleted)"); pos != std::string::npos && pos + 10 == p.size())
            p.resize(pos);
        return p;
    };
    size_t n = std::min(maps.size(), e.mappings.size());
    for (size_t i = 0; i < n && details.empty(); i++) {
        const auto& a = e.mappings[i];
        const auto& b = maps[i];
        if (a.start != b.start || a.end != b.end || a.perms != b.perms || strip(a.path) != strip(b.path)) {
            char buf[256];
            std::snprintf(buf, sizeof(buf), "  mapping %zu: recorded %lx-%lx %s %s, replay %lx-%lx %s %s\n", i,
                          (unsigned long)a.start, (unsigned long)a.end, a.perms.c_str(), a.path.c_str(),
                          (unsigned long)b.start, (unsigned long)b.end, b.perms.c_str(), b.path.c_str());
            details += buf;
        }
    }
    if (maps.size() != e.mappings.size() && details.empty())
        details +=
            "  " + std::to_string(maps.size()) + " mappings, recorded " + std::to_string(e.mappings.size()) + "\n";
    if (!details.empty()) {
        details.pop_back();
        diverge(t, "the program image after execve(\"" + e.filename + "\") differs from the recording", details);
    }
}

} // namespace rw::replay
