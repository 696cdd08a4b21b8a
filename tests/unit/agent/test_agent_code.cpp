// The syscall agent's code (replay/agent) run in this process, as a
// replayed program runs it: what it answers from its ring, what it leaves
// in the registers (what the kernel would), and the calls it lets go on
// to the kernel at the site's own syscall instruction.
#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "agent_ring.h"
#include "syscall_agent_code.h"

namespace {

constexpr uint64_t kSiteAt = RW_AGENT_STUBS_END - 0x100; // `mov $NR,%eax; syscall; ret`, in the agent's own pages
constexpr uint64_t kStubAt = RW_AGENT_STUBS;

int32_t rel32(uint64_t from_next, uint64_t to)
{
    return static_cast<int32_t>(static_cast<int64_t>(to - from_next));
}

struct Agent {
    uint8_t* base = nullptr;
    uint64_t site = 0; // the syscall instruction

    explicit Agent(int32_t nr)
    {
        void* p = mmap(nullptr, RW_AGENT_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        REQUIRE(p != MAP_FAILED);
        base = static_cast<uint8_t*>(p);
        std::memcpy(base, rw::replay::kSyscallAgentCode, sizeof rw::replay::kSyscallAgentCode);
        uint64_t b = reinterpret_cast<uint64_t>(base);
        site = b + kSiteAt + 5;
        // The site, patched as the replayer patches it: jmp STUB; syscall; ret.
        uint8_t* s = base + kSiteAt;
        s[0] = 0xe9;
        int32_t to_stub = rel32(b + kSiteAt + 5, b + kStubAt);
        std::memcpy(s + 1, &to_stub, 4);
        s[5] = 0x0f, s[6] = 0x05, s[7] = 0xc3;
        // The stub: mov $NR,%eax; lea SITE(%rip),%rcx; jmp entry.
        uint8_t* t = base + kStubAt;
        t[0] = 0xb8;
        std::memcpy(t + 1, &nr, 4);
        t[5] = 0x48, t[6] = 0x8d, t[7] = 0x0d;
        int32_t to_site = rel32(b + kStubAt + 12, site);
        std::memcpy(t + 8, &to_site, 4);
        t[12] = 0xe9;
        int32_t to_entry = rel32(b + kStubAt + 17, b + RW_AGENT_ENTRY);
        std::memcpy(t + 13, &to_entry, 4);
        load({});
    }
    ~Agent() { munmap(base, RW_AGENT_SIZE); }

    rw_agent_header& header() { return *reinterpret_cast<rw_agent_header*>(base + RW_AGENT_RING); }

    // One call to answer, with its ranges (bytes padded to 8).
    struct Range {
        uint64_t addr;
        std::vector<uint8_t> bytes;
        uint32_t dir;
    };
    void load(const std::vector<std::pair<rw_agent_call, std::vector<Range>>>& calls)
    {
        std::vector<uint8_t> ring(sizeof(rw_agent_header));
        for (auto [call, ranges] : calls) {
            std::vector<uint8_t> tail;
            for (const auto& r : ranges) {
                rw_agent_range head{r.addr, static_cast<uint32_t>(r.bytes.size()), r.dir};
                size_t at = tail.size();
                tail.resize(at + sizeof head + ((r.bytes.size() + 7) & ~size_t(7)));
                std::memcpy(tail.data() + at, &head, sizeof head);
                std::memcpy(tail.data() + at + sizeof head, r.bytes.data(), r.bytes.size());
            }
            call.nranges = static_cast<uint32_t>(ranges.size());
            call.size = static_cast<uint32_t>(sizeof call + tail.size());
            size_t at = ring.size();
            ring.resize(at + call.size);
            std::memcpy(ring.data() + at, &call, sizeof call);
            std::memcpy(ring.data() + at + sizeof call, tail.data(), tail.size());
        }
        rw_agent_header h{RW_AGENT_MAGIC, RW_AGENT_LAYOUT, static_cast<uint32_t>(calls.size()), 0, 0};
        std::memcpy(ring.data(), &h, sizeof h);
        std::memcpy(base + RW_AGENT_RING, ring.data(), ring.size());
    }

    rw_agent_call call(uint64_t result, std::initializer_list<uint64_t> args) const
    {
        rw_agent_call c{};
        c.site = site;
        c.nr = SYS_getpid;
        c.result = static_cast<int64_t>(result);
        c.nargs = static_cast<uint32_t>(args.size());
        size_t i = 0;
        for (uint64_t a : args)
            c.args[i++] = a;
        return c;
    }
};

struct Regs {
    uint64_t rax, rcx, r11, rdi, rsi, rdx, r10, r8, r9;
};

// Enters the patched site (its first byte, where the program would) with
// these argument registers, as a call: the site returns.
Regs enter(const Agent& agent, uint64_t rdi)
{
    Regs r{0, 0xdead, 0, rdi, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666};
    register uint64_t r10 asm("r10") = r.r10;
    register uint64_t r8 asm("r8") = r.r8;
    register uint64_t r9 asm("r9") = r.r9;
    register uint64_t r11 asm("r11") = 0;
    uint64_t at = reinterpret_cast<uint64_t>(agent.base) + kSiteAt;
    asm volatile("sub $128, %%rsp\n\t"
                 "call *%[at]\n\t"
                 "add $128, %%rsp"
                 : "+a"(r.rax), "+c"(r.rcx), "+D"(r.rdi), "+S"(r.rsi), "+d"(r.rdx), "+r"(r10), "+r"(r8), "+r"(r9),
                   "+r"(r11)
                 : [at] "b"(at)
                 : "memory", "cc");
    r.r10 = r10, r.r8 = r8, r.r9 = r9, r.r11 = r11;
    return r;
}

} // namespace

TEST_CASE("the agent answers a recorded call as the kernel would, and leaves the rest to it")
{
    Agent agent(SYS_getpid);
    uint64_t out = 0, in = 0x0123456789abcdefull;
    std::vector<uint8_t> out_bytes = {1, 2, 3, 4, 5, 6, 7, 8}, in_bytes(8);
    std::memcpy(in_bytes.data(), &in, 8);
    agent.load({{agent.call(4242, {0x1111}),
                 {{reinterpret_cast<uint64_t>(&in), in_bytes, RW_AGENT_IN},
                  {reinterpret_cast<uint64_t>(&out), out_bytes, RW_AGENT_OUT}}}});

    Regs r = enter(agent, 0x1111);
    CHECK(r.rax == 4242);
    CHECK(r.rcx == agent.site + 2);  // the address after the syscall instruction
    CHECK((r.r11 & 0x202) == 0x202); // the flags (bit 1 and IF always set)
    CHECK(r.rdi == 0x1111);
    CHECK(r.rsi == 0x2222);
    CHECK(r.rdx == 0x3333);
    CHECK(r.r10 == 0x4444);
    CHECK(r.r8 == 0x5555);
    CHECK(r.r9 == 0x6666);
    CHECK(std::memcmp(&out, out_bytes.data(), 8) == 0);
    CHECK(agent.header().served == 1);

    // The ring is spent: the program's own syscall instruction runs.
    r = enter(agent, 0x1111);
    CHECK(r.rax == static_cast<uint64_t>(getpid()));
    CHECK(r.rcx == agent.site + 2);
    CHECK(agent.header().served == 1);
}

TEST_CASE("a call that is not the recorded one goes to the kernel, the ring left as it was")
{
    Agent agent(SYS_getpid);
    uint64_t in = 7;
    std::vector<uint8_t> other(8, 0xee);
    SUBCASE("another argument")
    {
        agent.load({{agent.call(4242, {0x1111}), {}}});
        Regs r = enter(agent, 0x1112);
        CHECK(r.rax == static_cast<uint64_t>(getpid()));
        CHECK(r.rdi == 0x1112);
    }
    SUBCASE("other input bytes")
    {
        agent.load({{agent.call(4242, {}), {{reinterpret_cast<uint64_t>(&in), other, RW_AGENT_IN}}}});
        CHECK(enter(agent, 0).rax == static_cast<uint64_t>(getpid()));
    }
    SUBCASE("another site")
    {
        auto call = agent.call(4242, {});
        call.site += 16;
        agent.load({{call, {}}});
        CHECK(enter(agent, 0).rax == static_cast<uint64_t>(getpid()));
    }
    CHECK(agent.header().served == 0);
    CHECK(agent.header().next == 0);
}
