#include "event.h"

#include <signal.h>
#include <string.h>
#include <xxhash.h>

namespace rw {

std::string_view register_name(size_t index)
{
    static constexpr std::string_view names[Registers::kCount] = {
        "r15", "r14",      "r13", "r12", "rbp",    "rbx", "r11", "r10",     "r9",      "r8", "rax", "rcx", "rdx", "rsi",
        "rdi", "orig_rax", "rip", "cs",  "eflags", "rsp", "ss",  "fs_base", "gs_base", "ds", "es",  "fs",  "gs"};
    return index < Registers::kCount ? names[index] : "?";
}

uint64_t hash_bytes(const void* data, size_t size)
{
    return XXH3_64bits(data, size);
}

bool written_by_call(const SyscallEvent& e, const MemoryRange& input)
{
    for (const auto& m : e.memory)
        if (m.dir == Direction::Out && !m.unreadable && m.addr < input.addr + input.length &&
            input.addr < m.addr + m.length)
            return true;
    return false;
}

std::string signal_name(int signo)
{
    if (signo >= SIGRTMIN && signo <= SIGRTMAX)
        return "SIGRTMIN+" + std::to_string(signo - SIGRTMIN);
    const char* abbrev = sigabbrev_np(signo);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signo);
}

size_t event_memory_size(const Event& e)
{
    size_t bytes = sizeof(Event);
    if (const auto* sc = std::get_if<SyscallEvent>(&e))
        for (const auto& m : sc->memory)
            bytes += sizeof(m) + m.bytes.size();
    return bytes;
}

uint64_t event_seq(const Event& e)
{
    return std::visit([](const auto& v) { return v.seq; }, e);
}

Tid event_tid(const Event& e)
{
    return std::visit(
        [](const auto& v) -> Tid {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, ForkEvent>)
                return v.parent_tid;
            else
                return v.tid;
        },
        e);
}

std::string_view event_kind_name(const Event& e)
{
    static constexpr std::string_view names[] = {"syscall", "fork", "exec",    "exit", "signal",
                                                 "rdtsc",   "note", "preempt", "sync", "random"};
    return names[e.index()];
}

} // namespace rw
