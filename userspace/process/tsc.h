// rdtsc/rdtscp trap recording: the kernel (PR_SET_TSC) turns them into
// SIGSEGV; the supervisor executes them on the program's behalf.
#pragma once

#include <cstdint>
#include <optional>

#include "event.h"

namespace rw {

class TraceeMemory;

struct TscInstruction {
    bool rdtscp = false;
    int length = 0;
};

// The instruction at `rip`, if it is rdtsc or rdtscp.
std::optional<TscInstruction> decode_tsc_instruction(const TraceeMemory& mem, uint64_t rip);

// Sets the registers as the instruction would, and steps past it.
void apply_tsc(Registers& regs, const TscInstruction& insn, uint64_t tsc, uint32_t aux);

// Whether PR_SET_TSC makes rdtsc fault on this machine (a child tries it).
// Some hypervisors ignore it: then the program reads the TSC unseen.
bool tsc_trap_works();

// The host's counter (rdtscp, so `aux` is the TSC_AUX of this CPU).
uint64_t read_host_tsc(uint32_t& aux);

} // namespace rw
