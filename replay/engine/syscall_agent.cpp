// The syscall agent of one replayed address space (syscall_agent.h).
#include "syscall_agent.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "agent_ring.h"
#include "debug_log.h"
#include "process_image.h"
#include "syscall_agent_code.h"
#include "syscall_table.h"
#include "tracee.h"

namespace rw::replay {
namespace {

static_assert(sizeof(kSyscallAgentCode) <= RW_AGENT_CODE_MAX);
static_assert(sizeof(rw_agent_header) == 24 && sizeof(rw_agent_call) == 88 && sizeof(rw_agent_range) == 16);

constexpr uint32_t kStubs = (RW_AGENT_STUBS_END - RW_AGENT_STUBS) / RW_AGENT_STUB_SIZE;
constexpr uint64_t kMovEax = 0xb8;            // mov $imm32, %eax
constexpr uint8_t kSyscall[2] = {0x0f, 0x05}; // syscall
constexpr uint8_t kJmpRel32 = 0xe9;
constexpr uint8_t kJmpRel8 = 0xeb;
constexpr uint8_t kXorEaxEax[2] = {0x31, 0xc0}; // xor %eax, %eax
// mov 0x8(%rsp), %r9: the C library's syscall(), whose number is in rax
// already; it reads no rip, so the stub runs it as it is.
constexpr uint8_t kLoadSixthArgument[5] = {0x4c, 0x8b, 0x4c, 0x24, 0x08};
constexpr int kAnyCall = -2;
// A jump reaches ±2 GiB; the agent is kept well inside that from its sites.
constexpr int64_t kReach = (int64_t(1) << 31) - (int64_t(1) << 24);
// Above the highest mapping below the stack (ld.so, in the usual layout),
// where mappings made without an address never go and the stack, grown to
// its limit, does not reach (the kernel leaves at least 128 MiB there).
constexpr uint64_t kAboveHighest = uint64_t(64) << 20;

uint64_t align_up(uint64_t v, uint64_t a)
{
    return (v + a - 1) & ~(a - 1);
}

bool near(uint64_t a, uint64_t b)
{
    int64_t d = static_cast<int64_t>(a - b);
    return d < kReach && d > -kReach;
}

std::vector<uint8_t> header_bytes(uint32_t calls)
{
    rw_agent_header h{RW_AGENT_MAGIC, RW_AGENT_LAYOUT, calls, 0, 0};
    std::vector<uint8_t> out(sizeof h);
    std::memcpy(out.data(), &h, sizeof h);
    return out;
}

std::array<uint8_t, 5> jump(uint64_t from, uint64_t to)
{
    int32_t rel = static_cast<int32_t>(static_cast<int64_t>(to - (from + 5)));
    std::array<uint8_t, 5> out{kJmpRel32};
    std::memcpy(out.data() + 1, &rel, 4);
    return out;
}

// The agent a process already has (one forked from a process that had it,
// a snapshot's copy): its code mapping, then its data, of the agent's size.
std::optional<uint64_t> agent_in(pid_t tid, const std::vector<Mapping>& maps)
{
    TraceeMemory mem(tid);
    for (size_t i = 0; i + 1 < maps.size(); i++) {
        const Mapping& code = maps[i];
        const Mapping& data = maps[i + 1];
        if (!code.path.empty() || code.perms != "r-xp" || code.end - code.start != RW_AGENT_DATA ||
            data.start != code.end || data.end - code.start != RW_AGENT_SIZE)
            continue;
        auto magic = mem.read_value<uint64_t>(RemoteAddr(code.start + RW_AGENT_RING));
        if (magic && *magic == RW_AGENT_MAGIC)
            return code.start;
    }
    return std::nullopt;
}

// The ranges the agent checks (inputs) or writes (outputs), as the
// notification path does (Replayer::notification_matches).
bool used_range(const SyscallEvent& e, const MemoryRange& m)
{
    if (m.unreadable)
        return false;
    return m.dir == Direction::Out || !written_by_call(e, m);
}

// Whether [start, end) is code read from a file that the program cannot
// write: code it writes itself (a JIT) could change under a patch, which
// would then put back bytes that are no longer there.
bool in_program_file(pid_t tid, uint64_t start, uint64_t end)
{
    for (const auto& m : read_mappings(tid))
        if (m.start <= start && end <= m.end)
            return m.perms.size() >= 3 && m.perms[0] == 'r' && m.perms[1] == '-' && m.perms[2] == 'x' &&
                   !m.path.empty() && m.path[0] == '/';
    return false;
}

bool unlimited_data(pid_t tid)
{
    std::ifstream limits("/proc/" + std::to_string(tid) + "/limits");
    std::string line;
    while (std::getline(limits, line))
        if (line.starts_with("Max data size")) {
            std::istringstream fields(line.substr(std::string_view("Max data size").size()));
            std::string soft;
            fields >> soft;
            return soft == "unlimited";
        }
    return false;
}

} // namespace

uint64_t SyscallAgent::size()
{
    return RW_AGENT_SIZE;
}

bool SyscallAgent::in_code(uint64_t addr) const
{
    return addr >= base_ && addr < base_ + RW_AGENT_STUBS_END;
}

uint64_t SyscallAgent::exit_address() const
{
    return base_ + RW_AGENT_EXIT;
}

std::unique_ptr<SyscallAgent> SyscallAgent::map_into(pid_t tid, uint64_t site, const Inject& inject, std::string& why)
{
    std::vector<Mapping> maps = read_mappings(tid);
    if (auto there = agent_in(tid, maps); there && near(*there, site)) {
        std::unique_ptr<SyscallAgent> agent(new SyscallAgent(*there));
        agent->collect(tid); // (a copy's ring may hold what its parent had loaded)
        if (TraceeMemory(tid).write_code(RemoteAddr(*there), kSyscallAgentCode))
            return agent;
    }
    if (!unlimited_data(tid)) {
        // Its memory would count against the limit, and brk stop short.
        why = "the process has a data size limit";
        return nullptr;
    }
    uint64_t stack = 0, highest = 0;
    for (const auto& m : maps)
        if (m.path == "[stack]")
            stack = m.start;
    for (const auto& m : maps)
        if (m.end <= stack && m.path != "[stack]")
            highest = std::max(highest, m.end);
    if (!stack || !highest) {
        why = "no stack in the process's mappings";
        return nullptr;
    }
    uint64_t base = align_up(highest, uint64_t(2) << 20) + kAboveHighest;
    if (base + RW_AGENT_SIZE > stack || !near(base, site)) {
        why = "no room for it within reach of the program's syscalls";
        return nullptr;
    }
    int64_t got = inject(SYS_mmap, {base, RW_AGENT_SIZE, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, static_cast<uint64_t>(-1), 0});
    if (got != static_cast<int64_t>(base)) {
        why = "mmap: " + std::string(got < 0 ? strerror(static_cast<int>(-got)) : "placed elsewhere");
        if (got > 0)
            inject(SYS_munmap, {static_cast<uint64_t>(got), RW_AGENT_SIZE, 0, 0, 0, 0});
        return nullptr;
    }
    TraceeMemory mem(tid);
    auto header = header_bytes(0);
    if (!mem.write(RemoteAddr(base + RW_AGENT_RING), header) ||
        inject(SYS_mprotect, {base, RW_AGENT_DATA, PROT_READ | PROT_EXEC, 0, 0, 0}) != 0 ||
        !mem.write_code(RemoteAddr(base), kSyscallAgentCode)) {
        inject(SYS_munmap, {base, RW_AGENT_SIZE, 0, 0, 0, 0});
        why = "cannot write its code";
        return nullptr;
    }
    debug_log("replay: syscall agent at %#llx", (unsigned long long)base);
    return std::unique_ptr<SyscallAgent>(new SyscallAgent(base));
}

SyscallAgent::SyscallAgent(uint64_t base) : base_(base), decoder_(std::make_shared<X86Decoder>()) {}

uint64_t SyscallAgent::find_trampoline(pid_t tid, uint64_t at, std::array<uint8_t, 5>& padding)
{
    // Forward from the syscall, within a short jump of the setter's end
    // (the syscall instruction itself): after an instruction nothing falls
    // through from (a return, a jump), alignment padding nothing runs.
    constexpr uint64_t kShortReach = 127;
    std::vector<uint8_t> code(kShortReach + 16);
    size_t got = TraceeMemory(tid).read_partial(RemoteAddr(at), code);
    uint64_t pc = at + sizeof kSyscall;
    bool dead = false;
    while (pc + 5 <= at + std::min<uint64_t>(got, kShortReach)) {
        std::span<const uint8_t> rest(code.data() + (pc - at), got - (pc - at));
        auto insn = decoder_->decode(pc, rest);
        if (!insn || !insn->size)
            return 0;
        bool filler = insn->text.starts_with("nop") || insn->text == "int3";
        if (dead && filler) {
            uint64_t end = pc;
            while (end < pc + 5) {
                auto more = decoder_->decode(end, std::span<const uint8_t>(code.data() + (end - at), got - (end - at)));
                if (!more || !more->size || !(more->text.starts_with("nop") || more->text == "int3"))
                    break;
                end += more->size;
            }
            if (end >= pc + 5 && !trampolines_.contains(pc) && near(pc, base_ + RW_AGENT_STUBS)) {
                std::memcpy(padding.data(), code.data() + (pc - at), 5);
                return pc;
            }
        }
        if (insn->flow == X86Decoder::Insn::Flow::Stop)
            return 0;
        dead =
            insn->flow == X86Decoder::Insn::Flow::Ret || insn->flow == X86Decoder::Insn::Flow::Jump || (dead && filler);
        pc += insn->size;
    }
    return 0;
}

const SyscallAgent::Site& SyscallAgent::site_of(pid_t tid, uint64_t at)
{
    auto known = sites_.find(at);
    if (known != sites_.end())
        return known->second;
    Site site;
    uint8_t code[7];
    if (in_program_file(tid, at - 5, at + sizeof kSyscall) && TraceeMemory(tid).read(RemoteAddr(at - 5), code) &&
        std::memcmp(code + 5, kSyscall, 2) == 0 && near(at, base_ + RW_AGENT_STUBS)) {
        if (code[0] == kMovEax) {
            int32_t imm = 0;
            std::memcpy(&imm, code + 1, 4);
            site.nr = imm;
            site.setter.assign(code, code + 5);
        } else if (std::memcmp(code, kLoadSixthArgument, 5) == 0) {
            site.nr = kAnyCall; // (rax was set before; the agent checks it)
            site.setter.assign(code, code + 5);
        } else if (code[3] == kXorEaxEax[0] && code[4] == kXorEaxEax[1]) {
            site.trampoline = find_trampoline(tid, at, site.padding);
            if (site.trampoline && !in_program_file(tid, site.trampoline, site.trampoline + 5))
                site.trampoline = 0;
            if (site.trampoline) {
                site.nr = 0;
                site.setter.assign(code + 3, code + 5);
                trampolines_.insert(site.trampoline);
            }
        }
    }
    return sites_.emplace(at, std::move(site)).first->second;
}

bool SyscallAgent::can_serve(pid_t tid, const SyscallEvent& e, const Trapped& trapped)
{
    if (e.ip < 7)
        return false;
    uint64_t at = e.ip - 2;
    const Site& site = site_of(tid, at);
    if (site.nr != e.nr && !(site.nr == kAnyCall && e.nr >= 0))
        return false;
    if (trapped && (trapped(at - site.setter.size(), at + sizeof kSyscall) ||
                    (site.trampoline && trapped(site.trampoline, site.trampoline + 5))))
        return false;
    for (const auto& m : e.memory)
        if (used_range(e, m) && (m.hashed_only || m.bytes.size() != m.length))
            return false; // (the ptrace path reads a long input a piece at a time)
    return stub_of_site_.contains(e.ip - 2) || stub_of_site_.size() < kStubs;
}

std::vector<uint8_t> SyscallAgent::stub_code(uint64_t stub, uint64_t at, const Site& site) const
{
    // The setter; lea AT(%rip), %rcx; jmp entry.
    std::vector<uint8_t> code(site.setter);
    uint64_t lea = stub + code.size();
    int32_t to_site = static_cast<int32_t>(static_cast<int64_t>(at - (lea + 7)));
    code.insert(code.end(), {0x48, 0x8d, 0x0d});
    code.insert(code.end(), reinterpret_cast<uint8_t*>(&to_site), reinterpret_cast<uint8_t*>(&to_site) + 4);
    auto to_entry = jump(lea + 7, base_ + RW_AGENT_ENTRY);
    code.insert(code.end(), to_entry.begin(), to_entry.end());
    code.resize(RW_AGENT_STUB_SIZE, 0xcc);
    return code;
}

bool SyscallAgent::patch(pid_t tid, uint64_t at, const Site& site)
{
    if (patched_.contains(at))
        return true;
    TraceeMemory mem(tid);
    auto slot = stub_of_site_.find(at);
    if (slot == stub_of_site_.end()) {
        if (stub_of_site_.size() >= kStubs)
            return false;
        uint32_t index = static_cast<uint32_t>(stub_of_site_.size());
        uint64_t stub = base_ + RW_AGENT_STUBS + uint64_t(index) * RW_AGENT_STUB_SIZE;
        if (!mem.write_code(RemoteAddr(stub), stub_code(stub, at, site)))
            return false;
        slot = stub_of_site_.emplace(at, index).first;
    }
    uint64_t stub = base_ + RW_AGENT_STUBS + uint64_t(slot->second) * RW_AGENT_STUB_SIZE;
    uint64_t setter = at - site.setter.size();
    if (site.trampoline) {
        int8_t rel = static_cast<int8_t>(static_cast<int64_t>(site.trampoline - at));
        uint8_t short_jump[2] = {kJmpRel8, static_cast<uint8_t>(rel)};
        if (!mem.write_code(RemoteAddr(site.trampoline), jump(site.trampoline, stub)) ||
            !mem.write_code(RemoteAddr(setter), short_jump))
            return false;
    } else if (!mem.write_code(RemoteAddr(setter), jump(setter, stub))) {
        return false;
    }
    patched_.insert(at);
    return true;
}

size_t SyscallAgent::load(pid_t tid, std::span<const SyscallEvent* const> calls)
{
    std::vector<uint8_t> ring = header_bytes(0);
    uint32_t taken = 0;
    for (const SyscallEvent* e : calls) {
        const SyscallInfo* info = find_syscall(e->nr);
        rw_agent_call call{};
        call.site = e->ip - 2;
        call.nr = e->nr;
        std::copy(e->args.begin(), e->args.end(), call.args);
        call.result = e->ret;
        call.nargs = static_cast<uint32_t>(info ? std::min<size_t>(info->arg_formats.size(), 6) : 6);
        std::vector<uint8_t> ranges;
        bool whole = true;
        for (const auto& m : e->memory) {
            if (!used_range(*e, m))
                continue;
            if (m.hashed_only || m.bytes.size() != m.length) {
                whole = false;
                break;
            }
            rw_agent_range r{m.addr, static_cast<uint32_t>(m.length),
                             m.dir == Direction::In ? RW_AGENT_IN : RW_AGENT_OUT};
            size_t at = ranges.size();
            ranges.resize(at + sizeof r + align_up(m.length, 8));
            std::memcpy(ranges.data() + at, &r, sizeof r);
            std::memcpy(ranges.data() + at + sizeof r, m.bytes.data(), m.length);
            call.nranges++;
        }
        call.size = static_cast<uint32_t>(sizeof call + ranges.size());
        if (!whole || ring.size() + call.size > RW_AGENT_RING_SIZE || !patch(tid, call.site, site_of(tid, call.site)))
            break;
        size_t at = ring.size();
        ring.resize(at + call.size);
        std::memcpy(ring.data() + at, &call, sizeof call);
        std::memcpy(ring.data() + at + sizeof call, ranges.data(), ranges.size());
        taken++;
    }
    if (!taken)
        return 0;
    auto header = header_bytes(taken);
    std::memcpy(ring.data(), header.data(), header.size());
    if (!TraceeMemory(tid).write(RemoteAddr(base_ + RW_AGENT_RING), ring))
        return 0;
    loaded_ = true;
    return taken;
}

uint32_t SyscallAgent::collect(pid_t tid)
{
    TraceeMemory mem(tid);
    uint32_t served = 0;
    if (loaded_) {
        rw_agent_header h{};
        if (mem.read(RemoteAddr(base_ + RW_AGENT_RING), {reinterpret_cast<uint8_t*>(&h), sizeof h}) &&
            h.magic == RW_AGENT_MAGIC)
            served = h.served;
    }
    mem.write(RemoteAddr(base_ + RW_AGENT_RING), header_bytes(0));
    loaded_ = false;
    return served;
}

bool SyscallAgent::unpatch(pid_t tid)
{
    TraceeMemory mem(tid);
    bool ok = true;
    for (uint64_t at : patched_) {
        const Site& site = sites_[at];
        ok = mem.write_code(RemoteAddr(at - site.setter.size()), site.setter) && ok;
        if (site.trampoline)
            ok = mem.write_code(RemoteAddr(site.trampoline), site.padding) && ok;
    }
    patched_.clear();
    return ok;
}

} // namespace rw::replay
