// The debugger's breakpoints and watchpoints, kept apart from any process:
// the replayed process is replaced whenever time travel restores a
// snapshot, and they are applied again to whichever process is current.
// Software breakpoints are int3 bytes written into the process (gdb expects
// to read them back); hardware ones are perf events bound to the thread.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <vector>

#include "hw_breakpoint.h"
#include "instruction_trap.h"
#include "trap_tags.h"

namespace rw::replay {

class Task;

struct HardwareBreakpoint {
    perfclock::BreakpointKind kind;
    uint64_t addr;
    uint32_t len;
    bool operator<(const HardwareBreakpoint& o) const
    {
        return std::tie(kind, addr, len) < std::tie(o.kind, o.addr, o.len);
    }
};

class BreakpointSet {
public:
    // The replay engine's int3s (parallel traces): an int3 of this set shares one.
    void set_foreign_int3(perfclock::ByteUnderInt3 f) { foreign_ = std::move(f); }

    bool add_software(uint64_t addr) { return software_.insert(addr).second; }
    bool remove_software(uint64_t addr) { return software_.erase(addr) > 0; }
    bool has_software(uint64_t addr) const { return software_.count(addr) > 0; }
    const std::set<uint64_t>& software() const { return software_; }

    bool add_hardware(const HardwareBreakpoint& bp);
    bool remove_hardware(const HardwareBreakpoint& bp);
    const std::vector<HardwareBreakpoint>& hardware() const { return hardware_; }
    // The hardware breakpoint a trap's tag names.
    std::optional<HardwareBreakpoint> hardware_for_tag(uint64_t tag) const;

    // Makes the task's process hold exactly the software breakpoints, and
    // arms the hardware ones on the task (each stops it at every hit).
    // Throws std::system_error when the CPU has no debug register left.
    void apply(Task& task);
    // Takes every software breakpoint out of the process and disarms the
    // hardware ones (before its memory is copied, or while seeking).
    void lift(Task& task);
    bool applied_to(pid_t process) const { return applied_pid_ == process; }
    // An event mapped or unmapped memory: a page that held an int3 may have
    // been replaced (ld.so maps a library's whole span, then its code over
    // it), so the next apply() looks whether each is still there.
    void mappings_changed() { recheck_ = true; }
    // The process exec'd: its memory, and every address the debugger set,
    // belong to the former program. Forgets them all without writing.
    void forget_all();
    // The byte under the int3 this set has in `process` at `addr`, if any.
    std::optional<uint8_t> inserted_at(pid_t process, uint64_t addr) const
    {
        auto it = shadow_.find(addr);
        if (applied_pid_ != process || it == shadow_.end())
            return std::nullopt;
        return it->second;
    }
    // Puts the original bytes back in memory read from the process at `addr`.
    void hide(uint64_t addr, std::span<uint8_t> data) const;

    // The hardware breakpoint of thread `tid` that counted a hit since the
    // last call (each call takes the counts in). A single step that also
    // hits a watchpoint is reported by the kernel as the step alone: the
    // breakpoint's own SIGTRAP is dropped as one is already pending, so the
    // count is the only trace of the hit.
    std::optional<HardwareBreakpoint> counted_since_last(pid_t tid);

private:
    std::set<uint64_t> software_;
    std::vector<HardwareBreakpoint> hardware_;
    pid_t applied_pid_ = 0; // the process (real tgid) holding them
    std::set<pid_t> armed_tids_;
    bool hardware_changed_ = false;
    bool recheck_ = false;
    std::map<uint64_t, uint8_t> shadow_; // original byte under each inserted int3
    perfclock::ByteUnderInt3 foreign_;
    struct Armed {
        pid_t tid;
        size_t index; // into hardware_
        perfclock::BreakpointCounter counter;
        uint64_t seen = 0; // its count when last looked at
    };
    std::vector<Armed> armed_;
};

} // namespace rw::replay
