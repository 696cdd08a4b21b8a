#include "shared_pages.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "process_image.h"
#include "unique_fd.h"

namespace rw::replay {

std::vector<std::pair<uint64_t, uint64_t>> shared_page_runs(pid_t pid, size_t most)
{
    // Bit 63: present; bit 56: mapped by this process only.
    constexpr uint64_t kPresent = 1ULL << 63, kExclusive = 1ULL << 56;
    constexpr uint64_t kPage = 4096, kGapPages = 16, kBatch = 4096;
    std::vector<std::pair<uint64_t, uint64_t>> runs;
    UniqueFd pagemap(::open(("/proc/" + std::to_string(pid) + "/pagemap").c_str(), O_RDONLY | O_CLOEXEC));
    if (!pagemap)
        return runs;
    std::vector<uint64_t> entries(kBatch);
    for (const auto& m : read_mappings(pid)) {
        // Shared mappings are written in place: nothing to copy.
        if (!private_writable(m))
            continue;
        for (uint64_t at = m.start; at < m.end;) {
            uint64_t pages = std::min<uint64_t>(kBatch, (m.end - at) / kPage);
            ssize_t got = ::pread(pagemap.get(), entries.data(), pages * 8, static_cast<off_t>(at / kPage * 8));
            if (got <= 0)
                break;
            for (uint64_t i = 0; i < static_cast<uint64_t>(got) / 8; i++, at += kPage) {
                if ((entries[i] & kPresent) == 0 || (entries[i] & kExclusive) != 0)
                    continue;
                // (A gap page copied along is one the process had alone, or
                // a zero page it gets early: nothing it can see.)
                if (!runs.empty() && runs.back().first >= m.start && runs.back().second + kGapPages * kPage >= at)
                    runs.back().second = at + kPage;
                else
                    runs.emplace_back(at, at + kPage);
            }
        }
    }
    if (runs.size() > most) {
        std::nth_element(runs.begin(), runs.begin() + static_cast<long>(most), runs.end(),
                         [](const auto& a, const auto& b) { return a.second - a.first > b.second - b.first; });
        runs.resize(most);
    }
    return runs;
}

} // namespace rw::replay
