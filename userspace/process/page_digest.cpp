#include "page_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include "rewind_abi.h"
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

uint64_t page_sum(pid_t tid, const std::vector<uint64_t>& pages)
{
    if (pages.size() > RW_SUM_PAGES)
        return 0;
    TraceeMemory mem(tid);
    std::vector<uint8_t> buf(kPageSize);
    uint64_t h = 0;
    for (uint64_t page : pages) {
        if (!mem.read(RemoteAddr(page), buf))
            return 0;
        h = rw_page_sum_step(h, page);
        for (size_t i = 0; i < RW_PAGE_WORDS; i++) {
            uint64_t word;
            std::memcpy(&word, buf.data() + i * sizeof word, sizeof word);
            h = rw_page_sum_step(h, word);
        }
    }
    return h;
}

void add_stack_frame_pages(uint64_t rsp, uint64_t rbp, std::vector<uint64_t>& pages)
{
    constexpr uint64_t kMostFramePages = 4;
    uint64_t first = rsp & ~(kPageSize - 1);
    uint64_t last = first;
    if (rbp >= rsp && rbp - rsp < kMostFramePages * kPageSize)
        last = rbp & ~(kPageSize - 1);
    for (uint64_t page = first; page <= last; page += kPageSize)
        if (std::find(pages.begin(), pages.end(), page) == pages.end())
            pages.push_back(page);
}

} // namespace rw
