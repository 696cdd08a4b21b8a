// rdrand/rdseed: the CPU's random numbers, which nothing in the kernel can
// trap (CPUID faulting, which could hide them, is missing on most
// machines). The recorder plants an int3 on each one it finds in the code a
// program maps (random_sites.h) and runs it on the program's behalf; replay
// gives the thread the recorded number at the same instruction.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "event.h"

namespace rw {

struct RandomInstruction {
    bool seed = false; // rdseed, else rdrand
    Registers::Index reg = Registers::RAX;
    unsigned bits = 32; // 16, 32 or 64
    uint8_t length = 0;
};

// The instruction at the start of `code`, if it is rdrand or rdseed.
std::optional<RandomInstruction> decode_random_instruction(std::span<const uint8_t> code);

// Sets the registers as the instruction would when it succeeds (CF set,
// OF SF ZF AF PF clear) with `value`, and steps past it at `ip`.
void apply_random(Registers& regs, const RandomInstruction& insn, uint64_t ip, uint64_t value);

// A number from this machine's own rdrand/rdseed (getrandom where the CPU
// has none), of `bits` bits.
uint64_t host_random(bool seed, unsigned bits);

} // namespace rw
