#include <doctest/doctest.h>
#include <sys/mman.h>

#include <cstring>

#include "shared_pages.h"
#include "stopped_child.h"

using rw::replay::shared_page_runs;

namespace {

constexpr size_t kPages = 64, kPage = 4096;

bool covered(const std::vector<std::pair<uint64_t, uint64_t>>& runs, uint64_t start, uint64_t end)
{
    for (const auto& [a, b] : runs)
        if (a <= start && end <= b)
            return true;
    return false;
}

bool touched(const std::vector<std::pair<uint64_t, uint64_t>>& runs, uint64_t start, uint64_t end)
{
    for (const auto& [a, b] : runs)
        if (a < end && start < b)
            return true;
    return false;
}

} // namespace

TEST_CASE("the pages a forked copy shares are found, and not once it wrote them")
{
    void* mem = ::mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(mem != MAP_FAILED);
    auto* bytes = static_cast<unsigned char*>(mem);
    std::memset(bytes, 1, kPages * kPage); // present before the fork: shared after it
    uint64_t start = reinterpret_cast<uintptr_t>(mem), end = start + kPages * kPage;
    {
        // The child writes every page once continued (this process does not
        // touch them meanwhile: its own writes would unshare them too).
        StoppedChild child([&] {
            for (size_t i = 0; i < kPages; i++)
                bytes[i * kPage] = 2;
            ::raise(SIGSTOP);
        });
        auto runs = shared_page_runs(child.pid, 1000);
        CHECK(covered(runs, start, end));
        CHECK(shared_page_runs(child.pid, 1).size() <= 1);
        child.run_to_next_stop();
        CHECK_FALSE(touched(shared_page_runs(child.pid, 1000), start, end));
    }
    ::munmap(mem, kPages * kPage);
}

TEST_CASE("a process that cannot be read has no shared pages to copy")
{
    CHECK(shared_page_runs(-1, 64).empty());
}
