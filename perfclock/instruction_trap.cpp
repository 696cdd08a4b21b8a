#include "instruction_trap.h"

#include <stdexcept>

#include "text.h"

namespace rw::perfclock {
namespace {
constexpr uint8_t kInt3 = 0xcc;
}

InstructionTrap::InstructionTrap(pid_t tid, uint64_t addr) : InstructionTrap(tid, addr, std::nullopt, {}) {}

InstructionTrap::InstructionTrap(pid_t tid, uint64_t addr, std::optional<uint8_t> under_int3,
                                 std::function<bool()> debugger_has_it)
    : memory_(tid), addr_(addr), debugger_has_it_(std::move(debugger_has_it))
{
    if (under_int3) {
        original_ = *under_int3;
        planted_ = true;
        return;
    }
    if (!memory_.read(RemoteAddr(addr_), {&original_, 1}))
        throw std::runtime_error("cannot read the instruction at " + hex(addr_));
    if (original_ == kInt3)
        throw std::runtime_error("the instruction at " + hex(addr_) + " already holds a breakpoint");
    plant();
}

InstructionTrap::~InstructionTrap()
{
    if (slot_ && *slot_ == this)
        *slot_ = nullptr;
    if (debugger_has_it_)
        memory_.write_code(RemoteAddr(addr_), {debugger_has_it_() ? &kInt3 : &original_, 1});
    else if (planted_)
        memory_.write_code(RemoteAddr(addr_), {&original_, 1});
}

void InstructionTrap::lift()
{
    if (planted_ && !memory_.write_code(RemoteAddr(addr_), {&original_, 1}))
        throw std::runtime_error("cannot restore the instruction at " + hex(addr_));
    planted_ = false;
}

void InstructionTrap::plant()
{
    if (!planted_ && !memory_.write_code(RemoteAddr(addr_), {&kInt3, 1}))
        throw std::runtime_error("cannot plant a breakpoint at " + hex(addr_));
    planted_ = true;
}

} // namespace rw::perfclock
