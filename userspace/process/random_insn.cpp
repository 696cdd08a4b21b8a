#include "random_insn.h"

#include <cpuid.h>
#include <sys/random.h>

namespace rw {
namespace {

// ModRM's rm (with REX.B) to the register it names, in encoding order.
constexpr Registers::Index kGeneralRegisters[16] = {Registers::RAX, Registers::RCX, Registers::RDX, Registers::RBX,
                                                    Registers::RSP, Registers::RBP, Registers::RSI, Registers::RDI,
                                                    Registers::R8,  Registers::R9,  Registers::R10, Registers::R11,
                                                    Registers::R12, Registers::R13, Registers::R14, Registers::R15};

constexpr uint64_t kCarry = 1u << 0, kParity = 1u << 2, kAdjust = 1u << 4, kZero = 1u << 6, kSign = 1u << 7,
                   kOverflow = 1u << 11;

bool cpu_has(bool seed)
{
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (seed)
        return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_RDSEED);
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_RDRND);
}

__attribute__((target("rdrnd,rdseed"))) bool hardware_step(bool seed, unsigned long long& out)
{
    return seed ? __builtin_ia32_rdseed_di_step(&out) : __builtin_ia32_rdrand64_step(&out);
}

} // namespace

std::optional<RandomInstruction> decode_random_instruction(std::span<const uint8_t> code)
{
    RandomInstruction insn;
    size_t i = 0;
    bool operand16 = false;
    uint8_t rex = 0;
    // Legacy prefixes an assembler may emit before it; REX must come last.
    while (i < code.size() && i < 4 && (code[i] == 0x66 || code[i] == 0xf2 || code[i] == 0xf3)) {
        if (code[i] != 0x66)
            return std::nullopt; // f2/f3 0f c7 /6,/7 are other instructions
        operand16 = true;
        i++;
    }
    if (i < code.size() && (code[i] & 0xf0) == 0x40)
        rex = code[i++];
    if (code.size() < i + 3 || code[i] != 0x0f || code[i + 1] != 0xc7)
        return std::nullopt;
    uint8_t modrm = code[i + 2];
    unsigned mod = modrm >> 6, op = (modrm >> 3) & 7, rm = modrm & 7;
    if (mod != 3 || (op != 6 && op != 7))
        return std::nullopt;
    insn.seed = op == 7;
    insn.reg = kGeneralRegisters[rm | ((rex & 1) << 3)];
    insn.bits = (rex & 8) ? 64 : operand16 ? 16 : 32;
    insn.length = static_cast<uint8_t>(i + 3);
    return insn;
}

void apply_random(Registers& regs, const RandomInstruction& insn, uint64_t ip, uint64_t value)
{
    uint64_t& reg = regs[insn.reg];
    if (insn.bits == 64)
        reg = value;
    else if (insn.bits == 32)
        reg = value & 0xffffffffu; // a 32-bit destination clears the upper half
    else
        reg = (reg & ~uint64_t{0xffff}) | (value & 0xffff);
    uint64_t& flags = regs[Registers::EFLAGS];
    flags = (flags & ~(kParity | kAdjust | kZero | kSign | kOverflow)) | kCarry;
    regs[Registers::RIP] = ip + insn.length;
}

uint64_t host_random(bool seed, unsigned bits)
{
    static const bool has_rdrand = cpu_has(false), has_rdseed = cpu_has(true);
    unsigned long long value = 0;
    bool done = false;
    if (seed ? has_rdseed : has_rdrand)
        for (int tries = 0; tries < 100 && !done; tries++)
            done = hardware_step(seed, value);
    if (!done)
        while (getrandom(&value, sizeof(value), 0) != sizeof(value)) {
        }
    return bits == 64 ? value : value & ((uint64_t{1} << bits) - 1);
}

} // namespace rw
