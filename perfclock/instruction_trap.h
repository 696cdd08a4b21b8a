// An int3 the replay engine plants on one instruction, for machines whose
// debug registers do not work (some hypervisors do not virtualise them: the
// perf breakpoint opens but never fires). Each execution becomes a ptrace
// stop, like a hardware breakpoint with a sample period of 1, at roughly ten
// times the cost; the engine uses it only to find its own positions
// (a signal's delivery point, a preemption point).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "tracee.h"

namespace rw::perfclock {

// The byte under another component's int3 at an address, if it has one
// there now: an int3 of one's own shares it.
using ByteUnderInt3 = std::function<std::optional<uint8_t>(uint64_t addr)>;

class InstructionTrap {
public:
    // Plants the trap. Throws std::runtime_error if the byte cannot be
    // read or written.
    InstructionTrap(pid_t tid, uint64_t addr);
    // A trap a debugger's int3s share the address with: `under_int3` is
    // the byte under the debugger's int3 if it has one there now (the trap
    // is then that int3); taken out, the trap leaves an int3 if
    // `debugger_has_it` says the debugger has one there then.
    InstructionTrap(pid_t tid, uint64_t addr, std::optional<uint8_t> under_int3, std::function<bool()> debugger_has_it);
    // Takes the trap out (if the process still exists).
    ~InstructionTrap();
    InstructionTrap(const InstructionTrap&) = delete;
    InstructionTrap& operator=(const InstructionTrap&) = delete;

    // Takes the int3 out so the instruction can run, and puts it back.
    void lift();
    void plant();
    uint64_t address() const { return addr_; }
    bool planted() const { return planted_; }
    uint8_t original() const { return original_; }
    // While it lives, `*slot` names it (for a debugger inserting its own
    // int3 at the same address).
    void name_in(const InstructionTrap** slot)
    {
        slot_ = slot;
        *slot = this;
    }

private:
    TraceeMemory memory_;
    uint64_t addr_;
    uint8_t original_ = 0;
    bool planted_ = false;
    std::function<bool()> debugger_has_it_; // set where a debugger may have an int3 too
    const InstructionTrap** slot_ = nullptr;
};

// Names the engine's int3 for as long as it is planted.
struct EngineInt3 {
    EngineInt3(uint64_t& slot, uint64_t addr) : slot_(slot) { slot_ = addr; }
    ~EngineInt3() { slot_ = 0; }
    EngineInt3(const EngineInt3&) = delete;
    EngineInt3& operator=(const EngineInt3&) = delete;

private:
    uint64_t& slot_;
};

} // namespace rw::perfclock
