#include "robust_futexes.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace rw::replay {
namespace {

// The kernel stops walking a list this long (ROBUST_LIST_LIMIT).
constexpr int kListLimit = 2048;

// handle_futex_death in kernel/futex/core.c, for the word at `addr`.
bool release_one(uint64_t addr, Tid owner, const TraceeMemory& memory)
{
    auto word = memory.read_value<uint32_t>(RemoteAddr(addr));
    if (!word || (*word & FUTEX_TID_MASK) != static_cast<uint32_t>(owner))
        return false;
    uint32_t died = (*word & FUTEX_WAITERS) | FUTEX_OWNER_DIED;
    return memory.write(RemoteAddr(addr), {reinterpret_cast<const uint8_t*>(&died), sizeof died});
}

} // namespace

int release_robust_futexes(pid_t tid, Tid owner, const TraceeMemory& memory)
{
    void* head_ptr = nullptr;
    size_t len = 0;
    if (::syscall(SYS_get_robust_list, tid, &head_ptr, &len) != 0 || !head_ptr)
        return 0;
    // struct robust_list_head: the list's first entry, the futex word's
    // offset from an entry, and the entry of an operation in progress.
    uint64_t head = reinterpret_cast<uint64_t>(head_ptr);
    auto first = memory.read_value<uint64_t>(RemoteAddr(head));
    auto offset = memory.read_value<int64_t>(RemoteAddr(head + 8));
    auto pending = memory.read_value<uint64_t>(RemoteAddr(head + 16));
    if (!first || !offset || !pending)
        return 0;
    int released = 0;
    uint64_t entry = *first;
    for (int i = 0; entry != head && i < kListLimit; i++) {
        uint64_t at = entry & ~uint64_t(1); // bit 0: a PI futex
        // The pending entry is handled once, after the walk, as the kernel does.
        if (at != (*pending & ~uint64_t(1)) && release_one(at + *offset, owner, memory))
            released++;
        auto next = memory.read_value<uint64_t>(RemoteAddr(at));
        if (!next)
            break;
        entry = *next;
    }
    if (*pending && release_one((*pending & ~uint64_t(1)) + *offset, owner, memory))
        released++;
    return released;
}

} // namespace rw::replay
