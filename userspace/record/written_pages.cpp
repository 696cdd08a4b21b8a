#include "written_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <vector>

#include "page_digest.h"
#include "process_image.h"
#include "tracee.h"
#include "unique_fd.h"

namespace rw {
namespace {

constexpr uint64_t kPresent = uint64_t(1) << 63, kSwapped = uint64_t(1) << 62, kSoftDirty = uint64_t(1) << 55;
constexpr size_t kEntriesPerRead = 512;

bool clear_soft_dirty(pid_t pid)
{
    UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/clear_refs").c_str(), O_WRONLY | O_CLOEXEC));
    return fd.get() >= 0 && ::write(fd.get(), "4", 1) == 1;
}

// Writable mappings, but not a device's: its memory may answer a read with
// a side effect (the digest reads the pages it is given).
bool watched(const Mapping& m)
{
    if (m.perms.size() < 2 || m.perms[1] != 'w')
        return false;
    return m.path.rfind("/dev/", 0) != 0 || m.path.rfind("/dev/zero", 0) == 0 || m.path.rfind("/dev/shm/", 0) == 0;
}

// Calls `visit` with every run of consecutive pages of the process's
// writable mappings whose page-map entries have any of `bits`; false if the
// page map cannot be read. `visit` returns false to stop.
bool for_each_run(pid_t pid, uint64_t bits, const std::function<bool(uint64_t, size_t)>& visit)
{
    UniqueFd fd(::open(("/proc/" + std::to_string(pid) + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0)
        return false;
    std::array<uint64_t, kEntriesPerRead> entries;
    for (const auto& m : read_mappings(pid)) {
        if (!watched(m))
            continue;
        for (uint64_t page = m.start; page < m.end;) {
            size_t n = std::min<uint64_t>(entries.size(), (m.end - page) / kPageSize);
            ssize_t got = ::pread(fd.get(), entries.data(), n * sizeof(uint64_t),
                                  static_cast<off_t>(page / kPageSize * sizeof(uint64_t)));
            if (got <= 0)
                return false;
            size_t count = static_cast<size_t>(got) / sizeof(uint64_t);
            for (size_t i = 0; i < count;) {
                size_t end = i;
                while (end < count && (entries[end] & bits))
                    end++;
                if (end > i && !visit(page + i * kPageSize, end - i))
                    return true;
                i = end == i ? i + 1 : end;
            }
            page += count * kPageSize;
        }
    }
    return true;
}

constexpr size_t kPagesPerRead = 64;

// Hashes each page of a run, reading kPagesPerRead at a time into `buf`; a
// page that cannot be read (gone since) hashes to 0, as good as any other
// marker.
template <typename Visit>
bool hash_run(const TraceeMemory& mem, std::vector<uint8_t>& buf, uint64_t first, size_t count, Visit&& visit)
{
    for (size_t done = 0; done < count;) {
        size_t n = std::min(kPagesPerRead, count - done);
        uint64_t at = first + done * kPageSize;
        size_t got = mem.read_partial(RemoteAddr(at), {buf.data(), n * kPageSize}) / kPageSize;
        for (size_t i = 0; i < n; i++)
            if (!visit(at + i * kPageSize, i < got ? XXH3_64bits(buf.data() + i * kPageSize, kPageSize) : 0))
                return false;
        done += n;
    }
    return true;
}

} // namespace

bool WrittenPages::soft_dirty_works()
{
    static const bool works = [] {
        void* p = ::mmap(nullptr, kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return false;
        auto* byte = static_cast<volatile uint8_t*>(p);
        *byte = 1;
        bool set = false;
        if (clear_soft_dirty(::getpid())) {
            *byte = 2;
            UniqueFd fd(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
            uint64_t entry = 0;
            set =
                fd.get() >= 0 &&
                ::pread(fd.get(), &entry, sizeof entry,
                        static_cast<off_t>(reinterpret_cast<uint64_t>(p) / kPageSize * sizeof entry)) == sizeof entry &&
                (entry & kSoftDirty);
        }
        ::munmap(p, kPageSize);
        return set;
    }();
    return works;
}

WrittenPages::WrittenPages(pid_t pid, uint64_t max_bytes) : pid_(pid), soft_dirty_(soft_dirty_works())
{
    if (soft_dirty_) {
        complete_ = clear_soft_dirty(pid);
        return;
    }
    TraceeMemory mem(pid);
    std::vector<uint8_t> buf(kPagesPerRead * kPageSize);
    uint64_t bytes = 0;
    complete_ = for_each_run(pid, kPresent | kSwapped, [&](uint64_t first, size_t count) {
        if ((bytes += count * kPageSize) > max_bytes)
            return false;
        return hash_run(mem, buf, first, count, [&](uint64_t page, uint64_t hash) {
            hashes_.emplace_back(page, hash);
            return true;
        });
    });
    complete_ = complete_ && bytes <= max_bytes;
}

std::optional<std::vector<uint64_t>> WrittenPages::since(size_t limit) const
{
    if (!complete_)
        return std::nullopt;
    std::vector<uint64_t> pages;
    auto note = [&](uint64_t page) {
        pages.push_back(page);
        return pages.size() < limit;
    };
    if (soft_dirty_) {
        bool read = for_each_run(pid_, kSoftDirty, [&](uint64_t first, size_t count) {
            for (size_t i = 0; i < count; i++)
                if (!note(first + i * kPageSize))
                    return false;
            return true;
        });
        if (!read)
            return std::nullopt;
        return pages;
    }
    TraceeMemory mem(pid_);
    std::vector<uint8_t> buf(kPagesPerRead * kPageSize);
    bool read = for_each_run(pid_, kPresent | kSwapped, [&](uint64_t first, size_t count) {
        return hash_run(mem, buf, first, count, [&](uint64_t page, uint64_t now) {
            auto it = std::lower_bound(hashes_.begin(), hashes_.end(), std::pair<uint64_t, uint64_t>(page, 0));
            // A page that came into being since was written (or read: a
            // zero page, which the digest's content then pins down all the
            // same).
            if (it == hashes_.end() || it->first != page || it->second != now)
                return note(page);
            return true;
        });
    });
    if (!read)
        return std::nullopt;
    return pages;
}

} // namespace rw
