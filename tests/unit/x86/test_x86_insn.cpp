// x86 semantics used to step backwards: successors, writes, candidates.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <map>

#include "x86_insn.h"

using namespace rw;
using namespace rw::replay;

namespace {

// A sparse memory image for the decoder's reads.
struct FakeMemory {
    std::map<uint64_t, uint8_t> bytes;
    void put(uint64_t addr, std::initializer_list<uint8_t> code)
    {
        for (uint8_t b : code)
            bytes[addr++] = b;
    }
    void put64(uint64_t addr, uint64_t v)
    {
        for (int i = 0; i < 8; i++)
            bytes[addr + i] = static_cast<uint8_t>(v >> (8 * i));
    }
    MemoryReader reader() const
    {
        return [this](uint64_t addr, std::span<uint8_t> out) {
            for (size_t i = 0; i < out.size(); i++) {
                auto it = bytes.find(addr + i);
                if (it == bytes.end())
                    return false;
                out[i] = it->second;
            }
            return true;
        };
    }
};

std::vector<uint8_t> code_at(const FakeMemory& m, uint64_t addr, size_t n)
{
    std::vector<uint8_t> out(n);
    REQUIRE(m.reader()(addr, out));
    return out;
}

} // namespace

TEST_CASE("x86: successors of plain instructions, jumps, calls and returns")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    // 1000: mov %rdx,%rax ; 1003: jb 1000 (rel8 -5)
    m.put(0x1000, {0x48, 0x89, 0xd0, 0x72, 0xfb});
    auto mov = code_at(m, 0x1000, 3);
    CHECK(d.successor(0x1000, mov, r, m.reader()) == 0x1003u);
    auto jb = code_at(m, 0x1003, 2);
    r[Registers::EFLAGS] = 1; // CF: taken
    CHECK(d.successor(0x1003, jb, r, m.reader()) == 0x1000u);
    r[Registers::EFLAGS] = 0;
    CHECK(d.successor(0x1003, jb, r, m.reader()) == 0x1005u);

    // 2000: call 3000 (rel32) ; 3000: ret
    m.put(0x2000, {0xe8, 0xfb, 0x0f, 0x00, 0x00});
    m.put(0x3000, {0xc3});
    CHECK(d.successor(0x2000, code_at(m, 0x2000, 5), r, m.reader()) == 0x3000u);
    r[Registers::RSP] = 0x7000;
    m.put64(0x7000, 0x2005);
    CHECK(d.successor(0x3000, code_at(m, 0x3000, 1), r, m.reader()) == 0x2005u);

    // call *%rax
    m.put(0x4000, {0xff, 0xd0});
    r[Registers::RAX] = 0x5555;
    CHECK(d.successor(0x4000, code_at(m, 0x4000, 2), r, m.reader()) == 0x5555u);
    // int3 stops
    m.put(0x4100, {0xcc});
    CHECK_FALSE(d.successor(0x4100, code_at(m, 0x4100, 1), r, m.reader()).has_value());
}

TEST_CASE("x86: memory written, with rip-relative and stack operands")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    // 1000: movq $2, 0x2f3c(%rip)   (11 bytes; writes 0x1000 + 11 + 0x2f3c)
    m.put(0x1000, {0x48, 0xc7, 0x05, 0x3c, 0x2f, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00});
    auto w = d.writes(0x1000, code_at(m, 0x1000, 11), r);
    REQUIRE(w.size() == 1);
    CHECK(w[0].addr == 0x1000 + 11 + 0x2f3c);
    CHECK(w[0].len == 8);
    // push %rbx writes the slot below the stack pointer
    m.put(0x1100, {0x53});
    r[Registers::RSP] = 0x8000;
    w = d.writes(0x1100, code_at(m, 0x1100, 1), r);
    REQUIRE(w.size() == 1);
    CHECK(w[0].addr == 0x7ff8);
    // mov (%rax),%rdx reads only
    m.put(0x1200, {0x48, 0x8b, 0x10});
    CHECK(d.writes(0x1200, code_at(m, 0x1200, 3), r).empty());
}

TEST_CASE("x86: where an instruction writes, as a form of its registers")
{
    X86Decoder d;
    FakeMemory m;
    // addl $1, (%rax,%rdx,4): a histogram's increment
    m.put(0x1000, {0x83, 0x04, 0x90, 0x01});
    auto f = d.write_form(0x1000, code_at(m, 0x1000, 4));
    REQUIRE(f);
    CHECK(f->ip == 0x1000);
    CHECK(f->base == Registers::RAX);
    CHECK(f->index == Registers::RDX);
    CHECK(f->scale == 4);
    CHECK(f->disp == 0);
    CHECK(f->size == 4);
    CHECK(!f->times_rcx);
    // movq $2, 0x2f3c(%rip): all displacement
    m.put(0x1100, {0x48, 0xc7, 0x05, 0x3c, 0x2f, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00});
    f = d.write_form(0x1100, code_at(m, 0x1100, 11));
    REQUIRE(f);
    CHECK(f->base == -1);
    CHECK(f->index == -1);
    CHECK(f->disp == 0x1100 + 11 + 0x2f3c);
    CHECK(f->size == 8);
    // push %rbx: the slot below the stack pointer
    m.put(0x1200, {0x53});
    f = d.write_form(0x1200, code_at(m, 0x1200, 1));
    REQUIRE(f);
    CHECK(f->base == Registers::RSP);
    CHECK(f->disp == -8);
    // rep stosq: rcx quadwords from rdi
    m.put(0x1300, {0xf3, 0x48, 0xab});
    f = d.write_form(0x1300, code_at(m, 0x1300, 3));
    REQUIRE(f);
    CHECK(f->base == Registers::RDI);
    CHECK(f->size == 8);
    CHECK(f->times_rcx);
    // mov %rax, %fs:0x10 (a segment base the form cannot name) and a load: none.
    m.put(0x1400, {0x64, 0x48, 0x89, 0x04, 0x25, 0x10, 0x00, 0x00, 0x00});
    CHECK(!d.write_form(0x1400, code_at(m, 0x1400, 9)));
    m.put(0x1500, {0x48, 0x8b, 0x10});
    CHECK(!d.write_form(0x1500, code_at(m, 0x1500, 3)));
}

TEST_CASE("x86: SIMD stores write memory (memcpy's and memset's)")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    r[Registers::RDI] = 0x5000;
    r[Registers::R8] = 0x6000;
    struct Store {
        std::initializer_list<uint8_t> code;
        uint64_t addr, len;
    };
    const Store stores[] = {
        {{0x62, 0xc1, 0xfe, 0x48, 0x7f, 0x00}, 0x6000, 64}, // vmovdqu64 %zmm16,(%r8)
        {{0xc5, 0xfe, 0x7f, 0x07}, 0x5000, 32},             // vmovdqu %ymm0,(%rdi)
        {{0x0f, 0x11, 0x07}, 0x5000, 16},                   // movups %xmm0,(%rdi)
        {{0xc5, 0xf9, 0xd6, 0x07}, 0x5000, 8},              // vmovq %xmm0,(%rdi)
        {{0xc4, 0xe3, 0x7d, 0x39, 0x07, 0x01}, 0x5000, 16}, // vextracti128 $1,%ymm0,(%rdi)
    };
    uint64_t at = 0x1000;
    for (const Store& s : stores) {
        m.put(at, s.code);
        auto insn = d.decode(at, code_at(m, at, s.code.size()));
        REQUIRE(insn);
        CAPTURE(insn->text);
        CHECK(insn->writes_memory);
        auto w = d.writes(at, code_at(m, at, s.code.size()), r);
        REQUIRE(w.size() == 1);
        CHECK(w[0].addr == s.addr);
        CHECK(w[0].len == s.len);
        at += 0x100;
    }
    // Loads into the same registers write nothing.
    m.put(0x2000, {0xc5, 0xfe, 0x6f, 0x07}); // vmovdqu (%rdi),%ymm0
    CHECK_FALSE(d.decode(0x2000, code_at(m, 0x2000, 4))->writes_memory);
    CHECK(d.writes(0x2000, code_at(m, 0x2000, 4), r).empty());
}

TEST_CASE("x86: candidates for the instruction before an arrival")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    // 1000: movq $2, 0x2f3c(%rip) ; 100b: next instruction
    m.put(0x0ff0, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90});
    m.put(0x1000, {0x48, 0xc7, 0x05, 0x3c, 0x2f, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x90});
    uint64_t watched = 0x1000 + 11 + 0x2f3c;
    auto writers = writer_candidates(d, 0x100b, r, m.reader(), watched, 8);
    REQUIRE_FALSE(writers.empty());
    CHECK(writers.front() == 0x1000); // the whole instruction, before any shorter decoding of its tail

    // Arriving at a function's entry by a call: the call site is the first candidate.
    m.put(0x2000, {0xe8, 0xfb, 0x0f, 0x00, 0x00}); // call 3000
    m.put(0x3000, {0x55});                         // push %rbp
    m.put(0x2ff0, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90});
    m.put(0x1ff0, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90});
    r[Registers::RSP] = 0x7000;
    m.put64(0x7000, 0x2005);
    auto before = predecessor_candidates(d, 0x3000, r, m.reader());
    REQUIRE_FALSE(before.empty());
    CHECK(before.front() == 0x2000);
    // ... and the nop that falls through to it is a candidate too
    CHECK(std::find(before.begin(), before.end(), 0x2fffu) != before.end());
}

TEST_CASE("x86: candidates reached by jumps, through a PLT stub, and returns of its function")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    // A page of code: a loop's back edge (jmp rel8) and a jne rel32 land on 50a0.
    for (uint64_t a = 0x5000; a < 0x6000; a++)
        m.bytes[a] = 0x90;
    m.put(0x5100, {0xeb, 0x9e});                         // jmp 50a0
    m.put(0x5200, {0x0f, 0x85, 0x9a, 0xfe, 0xff, 0xff}); // jne 50a0
    auto before = predecessor_candidates(d, 0x50a0, r, m.reader());
    CHECK(std::find(before.begin(), before.end(), 0x5100u) != before.end());
    CHECK(std::find(before.begin(), before.end(), 0x5200u) != before.end());
    CHECK(std::find(before.begin(), before.end(), 0x509fu) != before.end()); // the nop falling through

    // call 6000 (a PLT stub: endbr64; jmp *GOT) whose GOT entry is 9000.
    m.put(0x20f0, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90});
    m.put(0x2100, {0xe8, 0xfb, 0x3e, 0x00, 0x00});
    for (uint64_t a = 0x6000; a < 0x6040; a++)
        m.bytes[a] = 0xcc;
    m.put(0x6000, {0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0x25, 0xf6, 0x1f, 0x00, 0x00}); // endbr64; jmp *0x1ff6(%rip)
    m.put64(0x8000, 0x9000);
    for (uint64_t a = 0x9000; a < 0x9040; a++)
        m.bytes[a] = 0x90;
    m.put(0x9003, {0xc3, 0xf3, 0x0f, 0x1e, 0xfa}); // ret, then the next function's endbr64
    r[Registers::RSP] = 0x7000;
    m.put64(0x7000, 0x2105);
    // Arriving at the function: the stub's jump is the likeliest.
    auto at_entry = predecessor_candidates(d, 0x9000, r, m.reader());
    REQUIRE_FALSE(at_entry.empty());
    CHECK(at_entry.front() == 0x6004);
    // Back after the call: the ret of the function the stub jumped to.
    CHECK(follows_call(d, 0x2105, m.reader()));
    CHECK_FALSE(follows_call(d, 0x5101, m.reader()));
    r[Registers::RSP] = 0x7008;
    auto after_call = predecessor_candidates(d, 0x2105, r, m.reader());
    CHECK(std::find(after_call.begin(), after_call.end(), 0x9003u) != after_call.end());
    CHECK(returns_of_function(d, 0x6000, r, m.reader()) == std::vector<uint64_t>{0x9003});
}

TEST_CASE("x86: a first call through a lazily bound PLT entry, stepped back through the dynamic linker")
{
    X86Decoder d;
    FakeMemory m;
    Registers r;
    m.put(0x20f0, {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90});
    m.put(0x2100, {0xe8, 0xfb, 0x3e, 0x00, 0x00}); // call 6000
    for (uint64_t a = 0x6000; a < 0x6040; a++)
        m.bytes[a] = 0xcc;
    m.put(0x6000, {0xff, 0x25, 0xfa, 0x1f, 0x00, 0x00}); // jmp *0x8000 (now bound to 9000)
    m.put(0x6006, {0x68, 0x00, 0x00, 0x00, 0x00});       // push $0
    m.put(0x600b, {0xe9, 0xf0, 0x00, 0x00, 0x00});       // jmp 6100 (PLT0)
    for (uint64_t a = 0x6100; a < 0x6130; a++)
        m.bytes[a] = 0xcc;
    m.put(0x6100, {0xff, 0x35, 0xfa, 0x1e, 0x00, 0x00}); // push *0x8000 (any)
    m.put(0x6106, {0xff, 0x25, 0x04, 0x1f, 0x00, 0x00}); // jmp *0x8010: the resolver
    m.put64(0x8000, 0x9000);
    m.put64(0x8010, 0xa000);
    for (uint64_t a = 0xa000; a < 0xa040; a++)
        m.bytes[a] = 0x90;
    m.put(0xa010, {0x41, 0xff, 0xe3}); // jmp *%r11
    r[Registers::R11] = 0x9000;
    auto has = [](const std::vector<uint64_t>& v, uint64_t a) { return std::find(v.begin(), v.end(), a) != v.end(); };
    // At the bound function: the resolver's jump.
    r[Registers::RSP] = 0x7000;
    m.put64(0x7000, 0x2105);
    CHECK(has(predecessor_candidates(d, 0x9000, r, m.reader()), 0xa010));
    // At the stub's push: the stub's jump through the GOT, before it was bound.
    CHECK(has(predecessor_candidates(d, 0x6006, r, m.reader()), 0x6000));
    // At PLT0: the stub's jump there (the relocation index on the stack).
    r[Registers::RSP] = 0x6ff8;
    CHECK(has(predecessor_candidates(d, 0x6100, r, m.reader()), 0x600b));
    // At the resolver: PLT0's jump (the link map pushed too).
    r[Registers::RSP] = 0x6ff0;
    CHECK(has(predecessor_candidates(d, 0xa000, r, m.reader()), 0x6106));
}
