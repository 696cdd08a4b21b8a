#include "page_digest.h"

#include <xxhash.h>

#include "tracee.h"

namespace rw {
uint64_t page_digest(pid_t tid, const std::vector<uint64_t>& pages)
{
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    TraceeMemory mem(tid);
    std::vector<uint8_t> buf(kPageSize);
    static constexpr uint8_t kUnreadable[] = {0xde, 0xad};
    for (uint64_t page : pages) {
        XXH3_64bits_update(state, &page, sizeof(page));
        if (mem.read(RemoteAddr(page), buf))
            XXH3_64bits_update(state, buf.data(), buf.size());
        else
            XXH3_64bits_update(state, kUnreadable, sizeof(kUnreadable));
    }
    uint64_t h = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return h;
}

} // namespace rw
