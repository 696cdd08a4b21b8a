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

bool SyscallAgent::site_pattern(pid_t tid, uint64_t site, int nr)
{
    auto known = patchable_.find(site);
    if (known != patchable_.end())
        return known->second == nr;
    uint8_t code[7];
    bool ok = TraceeMemory(tid).read(RemoteAddr(site - 5), code) && code[0] == kMovEax &&
              std::memcmp(code + 5, kSyscall, 2) == 0 && near(site, base_ + RW_AGENT_STUBS);
    int32_t imm = 0;
    std::memcpy(&imm, code + 1, 4);
    patchable_[site] = ok ? imm : -1;
    return ok && imm == nr;
}

bool SyscallAgent::can_serve(pid_t tid, const SyscallEvent& e)
{
    if (e.ip < 7 || !site_pattern(tid, e.ip - 2, e.nr))
        return false;
    for (const auto& m : e.memory)
        if (used_range(e, m) && (m.hashed_only || m.bytes.size() != m.length))
            return false; // (the ptrace path reads a long input a piece at a time)
    return stub_of_site_.contains(e.ip - 2) || stub_of_site_.size() < kStubs;
}

bool SyscallAgent::patch(pid_t tid, uint64_t site, int nr)
{
    if (patched_.contains(site))
        return true;
    TraceeMemory mem(tid);
    auto slot = stub_of_site_.find(site);
    if (slot == stub_of_site_.end()) {
        if (stub_of_site_.size() >= kStubs)
            return false;
        uint32_t index = static_cast<uint32_t>(stub_of_site_.size());
        uint64_t stub = base_ + RW_AGENT_STUBS + uint64_t(index) * RW_AGENT_STUB_SIZE;
        // mov $NR, %eax; lea SITE(%rip), %rcx; jmp entry
        std::array<uint8_t, RW_AGENT_STUB_SIZE> code;
        code.fill(0xcc);
        code[0] = kMovEax;
        std::memcpy(&code[1], &nr, 4);
        code[5] = 0x48, code[6] = 0x8d, code[7] = 0x0d;
        int32_t to_site = static_cast<int32_t>(static_cast<int64_t>(site - (stub + 12)));
        std::memcpy(&code[8], &to_site, 4);
        auto to_entry = jump(stub + 12, base_ + RW_AGENT_ENTRY);
        std::memcpy(&code[12], to_entry.data(), to_entry.size());
        if (!mem.write_code(RemoteAddr(stub), code))
            return false;
        slot = stub_of_site_.emplace(site, index).first;
    }
    uint64_t stub = base_ + RW_AGENT_STUBS + uint64_t(slot->second) * RW_AGENT_STUB_SIZE;
    if (!mem.write_code(RemoteAddr(site - 5), jump(site - 5, stub)))
        return false;
    patched_.insert(site);
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
        if (!whole || ring.size() + call.size > RW_AGENT_RING_SIZE || !patch(tid, call.site, e->nr))
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
    for (uint64_t site : patched_) {
        uint8_t mov[5] = {kMovEax};
        int32_t nr = patchable_[site];
        std::memcpy(mov + 1, &nr, 4);
        ok = mem.write_code(RemoteAddr(site - 5), mov) && ok;
    }
    patched_.clear();
    return ok;
}

} // namespace rw::replay
