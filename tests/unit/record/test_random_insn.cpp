// rdrand/rdseed: decoding, what running one does to the registers, and
// finding them in a file (this test binary holds a few, and a decoy).
#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "process_image.h"
#include "random_insn.h"
#include "random_sites.h"
#include "unique_fd.h"

// No .eh_frame entry covers these: found by decoding their whole segment.
asm(".text\n"
    ".globl rw_test_bare_rdrand\n"
    "rw_test_bare_rdrand:\n"
    "  movl $0xf0c70f, %eax\n" // the bytes 0f c7 f0 inside an immediate
    "  rdrand %rax\n"
    "  ret\n");
extern "C" void rw_test_bare_rdrand();

namespace {

__attribute__((noinline, used)) uint32_t framed_rdseed()
{
    uint32_t v;
    asm volatile("rdseed %0" : "=r"(v) : : "cc");
    return v;
}

std::optional<rw::RandomInstruction> decode(std::vector<uint8_t> bytes)
{
    return rw::decode_random_instruction(bytes);
}

uint64_t file_offset_of(uintptr_t addr)
{
    for (const auto& m : rw::read_mappings(getpid()))
        if (addr >= m.start && addr < m.end)
            return m.offset + (addr - m.start);
    return UINT64_MAX;
}

} // namespace

TEST_CASE("rdrand and rdseed decode with their width and register")
{
    auto eax = decode({0x0f, 0xc7, 0xf0});
    REQUIRE(eax);
    CHECK(!eax->seed);
    CHECK(eax->reg == rw::Registers::RAX);
    CHECK(eax->bits == 32);
    CHECK(eax->length == 3);

    auto rax = decode({0x48, 0x0f, 0xc7, 0xf0});
    REQUIRE(rax);
    CHECK(rax->bits == 64);
    CHECK(rax->length == 4);

    auto ax = decode({0x66, 0x0f, 0xc7, 0xf0});
    REQUIRE(ax);
    CHECK(ax->bits == 16);

    auto r9 = decode({0x49, 0x0f, 0xc7, 0xf9});
    REQUIRE(r9);
    CHECK(r9->seed);
    CHECK(r9->reg == rw::Registers::R9);
    CHECK(r9->bits == 64);

    CHECK(!decode({0x0f, 0xc7, 0x08}));       // cmpxchg8b [rax]
    CHECK(!decode({0xf3, 0x0f, 0xc7, 0xf8})); // rdpid
    CHECK(!decode({0x0f, 0xc7}));
}

TEST_CASE("a replayed rdrand sets its register as the CPU would")
{
    rw::Registers regs;
    regs[rw::Registers::RAX] = 0x1122334455667788;
    regs[rw::Registers::EFLAGS] = 0x8c5; // OF SF ZF PF and CF... set
    auto ax = decode({0x66, 0x0f, 0xc7, 0xf0});
    rw::apply_random(regs, *ax, 0x1000, 0xabcdef);
    CHECK(regs[rw::Registers::RAX] == 0x112233445566cdef);
    CHECK(regs[rw::Registers::RIP] == 0x1004);
    CHECK(regs[rw::Registers::EFLAGS] == 0x1); // CF only

    auto eax = decode({0x0f, 0xc7, 0xf0});
    rw::apply_random(regs, *eax, 0x2000, 0xffffffff12345678);
    CHECK(regs[rw::Registers::RAX] == 0x12345678);
}

TEST_CASE("the rdrand and rdseed of a file are found, with or without a function description")
{
    rw::UniqueFd self(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
    REQUIRE(self.get() >= 0);
    std::vector<uint64_t> sites = rw::find_random_sites(self.get());

    uint64_t bare = file_offset_of(reinterpret_cast<uintptr_t>(&rw_test_bare_rdrand));
    REQUIRE(bare != UINT64_MAX);
    // movl $imm32 is 5 bytes; the rdrand after it is a site, the decoy inside it is not.
    CHECK(std::count(sites.begin(), sites.end(), bare + 5) == 1);
    CHECK(std::count(sites.begin(), sites.end(), bare + 1) == 0);

    uint64_t framed = file_offset_of(reinterpret_cast<uintptr_t>(&framed_rdseed));
    REQUIRE(framed != UINT64_MAX);
    CHECK(std::any_of(sites.begin(), sites.end(), [&](uint64_t s) { return s >= framed && s < framed + 64; }));

    rw::UniqueFd text(::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC)); // not ELF
    CHECK(rw::find_random_sites(text.get()).empty());
}
