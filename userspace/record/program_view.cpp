#include "program_view.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "syscall_table.h"
#include "tracee.h"

namespace rw {
namespace {

// Seccomp filters attached to the thread (/proc/TID/status), the
// recording's own among them.
std::optional<long> seccomp_filters(pid_t tid)
{
    std::ifstream in("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("Seccomp_filters:", 0) == 0)
            return std::stol(line.substr(16));
    return std::nullopt;
}

} // namespace

bool give_program_view(pid_t tid, rw_rec_syscall& sc)
{
    uint64_t args[RW_MAX_ARGS];
    for (int i = 0; i < RW_MAX_ARGS; i++)
        args[i] = sc.args[i];
    ResolvedSpec resolved = resolve_spec(sc.nr, args);
    Registers regs = get_registers(tid);
    switch (static_cast<rw_view>(resolved.spec.view)) {
    case RW_VIEW_TSC_MODE: {
        // rdtsc traps for the recording only; the program's mode is the
        // one it would have inherited (rewind sets nothing else).
        int mode = PR_TSC_ENABLE;
        TraceeMemory mem(tid);
        return mem.write(RemoteAddr(sc.args[1]), {reinterpret_cast<const uint8_t*>(&mode), sizeof mode});
    }
    case RW_VIEW_SECCOMP_MODE: {
        // Every filter but the recording's is the program's or was there
        // before rewind: any of them is "filter mode", as natively.
        std::optional<long> filters = seccomp_filters(tid);
        if (!filters)
            return false;
        sc.ret = *filters > 1 ? SECCOMP_MODE_FILTER : 0;
        regs[Registers::RAX] = static_cast<uint64_t>(sc.ret);
        set_registers(tid, regs);
        return true;
    }
    case RW_VIEW_NONE:
    case RW_VIEW_ANSWERED:       // (supervisor_tracer_calls.cpp)
    case RW_VIEW_WRITES_PROCESS: // (Supervisor::on_stall)
    case RW_VIEW_SIGNAL_MASK:    // (Supervisor::emulate_tsc)
    case RW_VIEW_SHARES_MEMORY:  // (Supervisor::note_shared_mapping)
    case RW_VIEW_RSEQ:           // (Supervisor::refuse_rseq)
        break;
    }
    return false;
}

} // namespace rw
