#include "page_digest.h"

#include <fcntl.h>
#include <unistd.h>

#include <xxhash.h>

#include <array>
#include <string>

#include "process_image.h"
#include "tracee.h"
#include "unique_fd.h"

namespace rw {
namespace {

constexpr uint64_t kSoftDirtyBit = uint64_t(1) << 55;

} // namespace

bool clear_soft_dirty(pid_t pid)
{
    UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/clear_refs").c_str(), O_WRONLY | O_CLOEXEC));
    return fd.get() >= 0 && ::write(fd.get(), "4", 1) == 1;
}

std::optional<std::vector<uint64_t>> soft_dirty_pages(pid_t pid, size_t limit)
{
    UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        return std::nullopt;
    std::vector<uint64_t> pages;
    std::array<uint64_t, 512> entries;
    for (const auto& r : read_mappings(pid)) {
        if (r.perms.size() < 2 || r.perms[1] != 'w')
            continue;
        for (uint64_t page = r.start; page < r.end && pages.size() < limit;) {
            size_t n = std::min<uint64_t>(entries.size(), (r.end - page) / kPageSize);
            ssize_t got = ::pread(fd.get(), entries.data(), n * sizeof(uint64_t),
                                  static_cast<off_t>(page / kPageSize * sizeof(uint64_t)));
            if (got <= 0)
                return std::nullopt;
            size_t count = static_cast<size_t>(got) / sizeof(uint64_t);
            for (size_t i = 0; i < count && pages.size() < limit; i++)
                if (entries[i] & kSoftDirtyBit)
                    pages.push_back(page + i * kPageSize);
            page += count * kPageSize;
        }
    }
    return pages;
}

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
