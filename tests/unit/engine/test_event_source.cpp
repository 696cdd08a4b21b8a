#include <doctest/doctest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "event_source.h"
#include "event_stream.h"
#include "stdio_fds.h"

using namespace rw;
using namespace rw::replay;

namespace {

SyscallEvent call(int nr, std::array<uint64_t, 6> args, int64_t ret)
{
    SyscallEvent e;
    e.nr = nr;
    e.args = args;
    e.ret = ret;
    return e;
}

} // namespace

TEST_CASE("a pipeline stage's stdout is a pipe, not the terminal")
{
    StdioFds fds = StdioFds::inherited();
    CHECK(fds.stream_of(1) == 1);
    SyscallEvent pipe = call(SYS_pipe2, {0x1000, 0, 0, 0, 0, 0}, 0);
    MemoryRange out;
    out.dir = Direction::Out;
    int pair[2] = {3, 4};
    out.bytes.resize(8);
    std::memcpy(out.bytes.data(), pair, 8);
    pipe.memory.push_back(out);
    fds.apply(pipe);
    CHECK(fds.stream_of(3) == -1);
    fds.apply(call(SYS_dup2, {4, 1, 0, 0, 0, 0}, 1)); // the writer end becomes stdout
    CHECK(fds.stream_of(1) == -1);
    fds.apply(call(SYS_dup, {2, 0, 0, 0, 0, 0}, 5)); // a copy of stderr still reaches stderr
    CHECK(fds.stream_of(5) == 2);
    fds.apply(call(SYS_fcntl, {2, 1030 /* F_DUPFD_CLOEXEC */, 10, 0, 0, 0}, 10));
    CHECK(fds.stream_of(10) == 2);
    fds.apply(call(SYS_close, {2, 0, 0, 0, 0, 0}, 0));
    CHECK(fds.stream_of(2) == -1);
    fds.apply(call(SYS_openat, {0, 0, 0, 0, 0, 0}, 5)); // a new file reuses descriptor 5
    CHECK(fds.stream_of(5) == -1);
    fds.apply(call(SYS_close_range, {0, ~0ull, 0, 0, 0, 0}, 0));
    CHECK(fds.stream_of(10) == -1);
    fds.apply(call(SYS_dup2, {9, 1, 0, 0, 0, 0}, -9)); // a failed call changes nothing
}

TEST_CASE("a pidfd names its process until its number means something else")
{
    StdioFds fds = StdioFds::inherited();
    fds.apply(call(SYS_pidfd_open, {1234, 0, 0, 0, 0, 0}, 3));
    CHECK(fds.process_of_pidfd(3) == 1234);
    CHECK(!fds.process_of_pidfd(4));
    // pidfd_getfd's copy of the other process's stdout reaches stdout.
    fds.copied_from_process(5, 1);
    CHECK(fds.stream_of(5) == 1);
    fds.copied_from_process(5, -1);
    CHECK(fds.stream_of(5) == -1);
    fds.apply(call(SYS_dup2, {0, 3, 0, 0, 0, 0}, 3));
    CHECK(!fds.process_of_pidfd(3));
    fds.apply(call(SYS_pidfd_open, {99, 0, 0, 0, 0, 0}, 6));
    fds.apply(call(SYS_close, {6, 0, 0, 0, 0, 0}, 0));
    CHECK(!fds.process_of_pidfd(6));
}

TEST_CASE("per-thread lookahead skips other threads' events")
{
    char tmpl[] = "/tmp/rewind-source-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    {
        EventStreamWriter w(dir / "events");
        for (int i = 0; i < 6; i++) {
            SyscallEvent e = call(SYS_getpid, {}, i);
            e.seq = static_cast<uint64_t>(i);
            e.tid = i % 2 ? 200 : 100;
            w.append(e);
        }
    }
    EventSource src{EventStreamReader(dir / "events")};
    auto first = src.next();
    REQUIRE(first);
    CHECK(event_tid(first->event) == 100);
    const IndexedEvent* next200 = src.peek_for_task(200);
    REQUIRE(next200);
    CHECK(next200->index == 1);
    const IndexedEvent* next100 = src.peek_for_task(100);
    REQUIRE(next100);
    CHECK(next100->index == 2);
    CHECK(src.peek_for_task(100, 1)->index == 4);
    CHECK(src.peek_for_task(100, 2) == nullptr);
    CHECK(src.next()->index == 1); // lookahead does not consume
    std::filesystem::remove_all(dir);
}

TEST_CASE("an event source checkpoint restores the stream, holes included")
{
    char tmpl[] = "/tmp/rewind-source-XXXXXX";
    std::filesystem::path dir = mkdtemp(tmpl);
    {
        EventStreamWriter w(dir / "events");
        for (int i = 0; i < 10; i++) {
            SyscallEvent e = call(SYS_getpid, {}, i);
            e.tid = i % 2 ? 200 : 100;
            w.append(e);
        }
    }
    EventSource src{EventStreamReader(dir / "events")};
    src.next();                          // 0
    auto ahead = src.take_for_task(200); // 1, out of order
    REQUIRE(ahead);
    CHECK(ahead->index == 1);
    auto cp = src.checkpoint();
    CHECK(cp.cursor == 2);
    for (int i = 0; i < 5; i++)
        src.next();
    src.restore(cp);
    std::vector<uint64_t> seen;
    while (auto e = src.next())
        seen.push_back(e->index);
    CHECK(seen == std::vector<uint64_t>{2, 3, 4, 5, 6, 7, 8, 9});
    std::filesystem::remove_all(dir);
}
