// An int3 the replay engine plants on one instruction, for machines whose
// debug registers do not work (some hypervisors do not virtualise them: the
// perf breakpoint opens but never fires). Each execution becomes a ptrace
// stop, like a hardware breakpoint with a sample period of 1, at roughly ten
// times the cost; the engine uses it only to find its own positions
// (a signal's delivery point, a preemption point).
#pragma once

#include <cstdint>
#include <functional>

#include "tracee.h"

namespace rw::replay {

class InstructionTrap {
public:
    // Plants the trap. Throws std::runtime_error if the byte cannot be
    // read or written.
    InstructionTrap(pid_t tid, uint64_t addr);
    // Where a debugger's int3 already is (`original`: the byte under it):
    // the trap is that int3. Taken out, it leaves the int3 if `still_there`
    // says the debugger has it then, else the original byte.
    InstructionTrap(pid_t tid, uint64_t addr, uint8_t original, std::function<bool()> still_there);
    // Takes the trap out (if the process still exists).
    ~InstructionTrap();
    InstructionTrap(const InstructionTrap&) = delete;
    InstructionTrap& operator=(const InstructionTrap&) = delete;

    // Takes the int3 out so the instruction can run, and puts it back.
    void lift();
    void plant();
    uint64_t address() const { return addr_; }

private:
    TraceeMemory memory_;
    uint64_t addr_;
    uint8_t original_ = 0;
    bool planted_ = false;
    std::function<bool()> still_there_; // set for a shared trap
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

} // namespace rw::replay
