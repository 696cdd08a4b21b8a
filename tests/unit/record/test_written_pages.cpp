#include <doctest/doctest.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>

#include "page_digest.h"
#include "stopped_child.h"
#include "written_pages.h"

using namespace rw;

namespace {

// The child writes the first of two pages between its two stops.
void write_pages(uint8_t* pages)
{
    pages[10] = 42;       // a change
    pages[kPageSize] = 0; // the same byte again: no change
    ::raise(SIGSTOP);
}

} // namespace

TEST_CASE("the pages a process changes between two stops")
{
    auto* area = static_cast<uint8_t*>(
        ::mmap(nullptr, 2 * kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(area != MAP_FAILED);
    area[0] = 1;
    area[kPageSize] = 0;
    {
        StoppedChild child([area] { write_pages(area); });
        WrittenPages written(child.pid);
        auto before = page_digest(child.pid, {reinterpret_cast<uint64_t>(area)});
        child.run_to_next_stop();
        auto pages = written.since(4096);
        REQUIRE(pages.has_value());
        auto first = reinterpret_cast<uint64_t>(area);
        CHECK(std::find(pages->begin(), pages->end(), first) != pages->end());
        if (!WrittenPages::soft_dirty_works()) // content, not writes: the second page kept its byte
            CHECK(std::find(pages->begin(), pages->end(), first + kPageSize) == pages->end());
        CHECK(page_digest(child.pid, {first}) != before);
    }
    ::munmap(area, 2 * kPageSize);
}

TEST_CASE("more resident memory than the bound: the pages written cannot be told")
{
    if (WrittenPages::soft_dirty_works())
        return; // (no bound: the kernel keeps the bits)
    auto* area = static_cast<uint8_t*>(
        ::mmap(nullptr, 2 * kPageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    REQUIRE(area != MAP_FAILED);
    {
        StoppedChild child([area] { write_pages(area); });
        WrittenPages written(child.pid, kPageSize);
        CHECK_FALSE(written.since(4096).has_value());
    }
    ::munmap(area, 2 * kPageSize);
}
