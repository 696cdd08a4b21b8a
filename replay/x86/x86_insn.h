// Just enough x86-64 semantics to step backwards without single-stepping
// from far away: decoding (Capstone), where an instruction goes next, and
// which memory it writes, given the registers and memory before it runs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "event.h"
#include "rewind_abi.h"

namespace rw::replay {

// Reads tracee memory; false when unreadable.
using MemoryReader = std::function<bool(uint64_t addr, std::span<uint8_t> out)>;

struct MemoryWrite {
    uint64_t addr = 0;
    uint64_t len = 0;
};

// Where an instruction writes, as a function of the registers it runs
// with: rw_write_form (rewind_abi.h), the form replay's write filter
// evaluates in the kernel.
using WriteForm = rw_write_form;

class X86Decoder {
public:
    X86Decoder();
    ~X86Decoder();
    X86Decoder(const X86Decoder&) = delete;
    X86Decoder& operator=(const X86Decoder&) = delete;

    struct Insn {
        uint64_t addr = 0;
        uint8_t size = 0;
        enum class Flow { Next, Jump, CondJump, Call, Ret, Stop } flow = Flow::Next;
        std::string text; // "mov qword ptr [rip + 0x2e8c], 2"
        bool writes_memory = false;
    };

    // The instruction starting at the beginning of `code`, which is at `addr`.
    std::optional<Insn> decode(uint64_t addr, std::span<const uint8_t> code) const;

    // Where `insn` goes when it runs with these registers and memory
    // (nullopt: it stops, faults, or depends on what cannot be known).
    std::optional<uint64_t> successor(uint64_t addr, std::span<const uint8_t> code, const Registers& regs,
                                      const MemoryReader& memory) const;
    // The memory `insn` writes when it runs with these registers.
    std::vector<MemoryWrite> writes(uint64_t addr, std::span<const uint8_t> code, const Registers& regs) const;
    // The one place the instruction at `addr` writes, as a form; nullopt
    // where it writes none or several, or where the address needs more
    // than the general registers (a segment base, a vector index).
    std::optional<WriteForm> write_form(uint64_t addr, std::span<const uint8_t> code) const;

private:
    struct Impl;
    Impl* impl_;
};

// Instructions that may have run just before the thread arrived at
// `target`: instructions ending exactly at `target` that fall through to it,
// and the call whose return address is on top of the stack if `target` is
// where it calls. Most plausible first.
std::vector<uint64_t> predecessor_candidates(const X86Decoder& decoder, uint64_t target, const Registers& regs,
                                             const MemoryReader& memory);

// Whether the instruction ending at `addr` is a call (so a thread there has
// just returned from its callee).
bool follows_call(const X86Decoder& decoder, uint64_t addr, const MemoryReader& memory);

// The returns of the function at `entry`, or of the function a stub there
// (the PLT) jumps to.
std::vector<uint64_t> returns_of_function(const X86Decoder& decoder, uint64_t entry, const Registers& regs,
                                          const MemoryReader& memory);

// Instructions ending at `after` (where the thread is after a watched
// write) that write memory overlapping [addr, addr+len), judged with the
// registers after the write. Most plausible first.
std::vector<uint64_t> writer_candidates(const X86Decoder& decoder, uint64_t after, const Registers& regs,
                                        const MemoryReader& memory, uint64_t addr, uint64_t len);

} // namespace rw::replay
