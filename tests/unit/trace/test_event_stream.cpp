#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "event_samples.h"
#include "bytes.h"
#include "event_stream.h"

using namespace rw;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir()
    {
        char tmpl[] = "/tmp/rewind-test-XXXXXX";
        path = mkdtemp(tmpl);
    }
    ~TempDir() { fs::remove_all(path); }
};

std::vector<uint8_t> slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void spit(const fs::path& p, const std::vector<uint8_t>& bytes, size_t n)
{
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(n));
}

// Writes events in chunks of `per_chunk`; returns the file offset of each chunk start.
std::vector<uint64_t> write_stream(const fs::path& p, const std::vector<Event>& events, size_t per_chunk)
{
    std::vector<uint64_t> starts;
    EventStreamWriter w(p, 3, SIZE_MAX);
    for (size_t i = 0; i < events.size(); i++) {
        if (i % per_chunk == 0) {
            w.flush();
            starts.push_back(w.file_bytes());
        }
        w.append(events[i]);
    }
    w.flush();
    return starts;
}

std::vector<Event> read_all(const fs::path& p, StreamEnd& end)
{
    EventStreamReader r(p);
    std::vector<Event> out;
    Event e;
    while (r.next(e))
        out.push_back(e);
    end = r.end();
    return out;
}

} // namespace

TEST_CASE("a stream reads back exactly, chunk after chunk")
{
    TempDir dir;
    auto events = testing::sample_events(300);
    write_stream(dir.path / "events", events, 40);
    StreamEnd end;
    auto back = read_all(dir.path / "events", end);
    CHECK(end.kind == StreamEnd::Kind::Clean);
    CHECK(end.chunks == 8);
    CHECK(back == events);
}

TEST_CASE("cut anywhere in the last chunk: every complete chunk reads, the end is reported")
{
    TempDir dir;
    auto events = testing::sample_events(90);
    auto starts = write_stream(dir.path / "full", events, 30);
    auto bytes = slurp(dir.path / "full");
    uint64_t last = starts.back();
    for (size_t cut = last; cut < bytes.size(); cut++) {
        spit(dir.path / "cut", bytes, cut);
        StreamEnd end;
        auto back = read_all(dir.path / "cut", end);
        CAPTURE(cut);
        REQUIRE(back.size() == 60);
        CHECK(std::equal(back.begin(), back.end(), events.begin()));
        CHECK(end.events == 60);
        CHECK(end.file_offset == last);
        if (cut == last)
            CHECK(end.kind == StreamEnd::Kind::Clean); // a cut on a chunk boundary looks complete
        else
            CHECK(end.kind == StreamEnd::Kind::Truncated);
    }
}

TEST_CASE("a flush that fails part way (the disk filled) leaves no hole for the next one")
{
    TempDir dir;
    auto events = testing::sample_events(90);
    // In a child: the file size limit stands in for a full disk (EFBIG).
    pid_t child = ::fork();
    if (child == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        EventStreamWriter w(dir.path / "events", 3, SIZE_MAX);
        for (size_t i = 0; i < 30; i++)
            w.append(events[i]);
        w.flush();
        struct rlimit small = {w.file_bytes() + 20, RLIM_INFINITY};
        ::setrlimit(RLIMIT_FSIZE, &small);
        for (size_t i = 30; i < 60; i++)
            w.append(events[i]);
        bool failed = false;
        try {
            w.flush();
        } catch (const std::system_error&) {
            failed = true;
        }
        // The cut freed the torn chunk's space: the next flush succeeds.
        struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
        ::setrlimit(RLIMIT_FSIZE, &unlimited);
        for (size_t i = 60; i < 90; i++)
            w.append(events[i]);
        w.flush();
        ::_exit(failed ? 0 : 3);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "the writer: status ", status);
    StreamEnd end;
    auto back = read_all(dir.path / "events", end);
    CHECK(end.kind == StreamEnd::Kind::Clean);
    CHECK(back == events);
}

TEST_CASE("a flipped byte anywhere in a chunk is caught by a checksum")
{
    TempDir dir;
    auto events = testing::sample_events(60);
    auto starts = write_stream(dir.path / "full", events, 30);
    auto bytes = slurp(dir.path / "full");
    for (size_t pos = starts[1]; pos < bytes.size(); pos++) {
        auto bad = bytes;
        bad[pos] ^= 0x20;
        spit(dir.path / "bad", bad, bad.size());
        StreamEnd end;
        auto back = read_all(dir.path / "bad", end);
        CAPTURE(pos);
        CHECK(end.kind == StreamEnd::Kind::Corrupt);
        CHECK(back.size() == 30);
        CHECK(end.events == 30);
    }
}

TEST_CASE("not a stream, or a future version, is refused up front")
{
    TempDir dir;
    spit(dir.path / "junk", std::vector<uint8_t>(40, 'x'), 40);
    CHECK_THROWS_AS(EventStreamReader(dir.path / "junk"), FormatError);
    write_stream(dir.path / "ok", testing::sample_events(3), 3);
    auto bytes = slurp(dir.path / "ok");
    bytes[8] = 99; // version
    spit(dir.path / "v99", bytes, bytes.size());
    CHECK_THROWS_WITH_AS(EventStreamReader(dir.path / "v99"), doctest::Contains("version 99"), FormatError);
    bytes[8] = 0;
    spit(dir.path / "v0", bytes, bytes.size());
    CHECK_THROWS_WITH_AS(EventStreamReader(dir.path / "v0"), doctest::Contains("reads versions 1 to"), FormatError);
    // Version 1 (before reads by reference) is read as it is.
    bytes[8] = 1;
    spit(dir.path / "v1", bytes, bytes.size());
    EventStreamReader v1(dir.path / "v1");
    Event e;
    int n = 0;
    while (v1.next(e))
        n++;
    CHECK(n == 3);
}

TEST_CASE("seek returns to any event already read, and past it")
{
    TempDir dir;
    auto events = testing::sample_events(200);
    write_stream(dir.path / "events", events, 30);
    EventStreamReader r(dir.path / "events");
    Event e;
    for (int i = 0; i < 150; i++)
        REQUIRE(r.next(e));
    for (uint64_t target : {0u, 29u, 30u, 31u, 95u, 149u, 150u, 199u, 7u}) {
        CAPTURE(target);
        r.seek(target);
        REQUIRE(r.next(e));
        CHECK(e == events[target]);
        CHECK(r.next_index() == target + 1);
    }
    r.seek(200);
    CHECK_FALSE(r.next(e));
    CHECK(r.end().kind == StreamEnd::Kind::Clean);
}

namespace {

// A chunk header as a crafted trace can write it: its own checksum holds.
void reseal_header(std::vector<uint8_t>& bytes, size_t at)
{
    uint32_t h = XXH32(bytes.data() + at, 36, 0);
    std::memcpy(bytes.data() + at + 36, &h, 4);
}

// Reads `file` in a child whose address space is limited to 512 MiB: a
// reader that sizes a buffer by what a header claims dies there.
StreamEnd read_with_little_memory(const fs::path& file)
{
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    pid_t child = ::fork();
    if (child == 0) {
        struct rlimit limit = {512u << 20, 512u << 20};
        ::setrlimit(RLIMIT_AS, &limit);
        StreamEnd end;
        try {
            read_all(file, end);
        } catch (...) {
            ::_exit(2);
        }
        int kind = static_cast<int>(end.kind);
        (void)!::write(pipe_fds[1], &kind, sizeof kind);
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    int kind = -1, status = 0;
    (void)!::read(pipe_fds[0], &kind, sizeof kind);
    ::close(pipe_fds[0]);
    ::waitpid(child, &status, 0);
    REQUIRE_MESSAGE((WIFEXITED(status) && WEXITSTATUS(status) == 0), "the reader died: status ", status);
    StreamEnd end;
    end.kind = static_cast<StreamEnd::Kind>(kind);
    return end;
}

} // namespace

TEST_CASE("a chunk header's sizes are checked before anything is allocated for them")
{
    TempDir dir;
    auto events = testing::sample_events(10);
    auto starts = write_stream(dir.path / "ok", events, 10);
    auto bytes = slurp(dir.path / "ok");
    size_t at = starts[0];
    const uint32_t huge = 0xfffffff0;

    // A payload larger than the file: truncated, not a 4 GiB buffer.
    auto longer = bytes;
    std::memcpy(longer.data() + at + 4, &huge, 4);
    reseal_header(longer, at);
    spit(dir.path / "longer", longer, longer.size());
    CHECK(read_with_little_memory(dir.path / "longer").kind == StreamEnd::Kind::Truncated);

    // An uncompressed size other than the one the zstd frame holds: corrupt.
    auto bigger = bytes;
    std::memcpy(bigger.data() + at + 8, &huge, 4);
    reseal_header(bigger, at);
    spit(dir.path / "bigger", bigger, bigger.size());
    CHECK(read_with_little_memory(dir.path / "bigger").kind == StreamEnd::Kind::Corrupt);
}

TEST_CASE("a stream's tail from a chunk on reads as a stream of its own, after its start is released")
{
    TempDir dir;
    auto events = testing::sample_events(2000);
    std::vector<uint64_t> starts;
    {
        EventStreamWriter w(dir.path / "events", 3, SIZE_MAX);
        for (size_t i = 0; i < events.size(); i++) {
            if (i % 100 == 0) {
                w.flush();
                starts.push_back(w.file_bytes());
            }
            w.append(events[i]);
        }
        w.flush();
        // The flight recorder keeps the events from chunk 12 on.
        REQUIRE(starts[12] > 8192);
        w.release_before(starts[12]);
    }
    struct stat st {};
    REQUIRE(::stat((dir.path / "events").c_str(), &st) == 0);
    CHECK(static_cast<uint64_t>(st.st_blocks) * 512 < static_cast<uint64_t>(st.st_size)); // the start is freed
    StreamEnd end;
    auto whole = read_all(dir.path / "events", end);
    CHECK(whole.size() < 1200); // (the released start reads as zeros)

    CHECK(write_stream_tail(dir.path / "events", starts[12], 1200, dir.path / "tail") == 800);
    auto tail = read_all(dir.path / "tail", end);
    CHECK(end.kind == StreamEnd::Kind::Clean);
    REQUIRE(tail.size() == 800);
    CHECK(std::equal(tail.begin(), tail.end(), events.begin() + 1200));

    // A tail asked from the wrong event number is no stream at all.
    CHECK(write_stream_tail(dir.path / "events", starts[12], 1100, dir.path / "wrong") == 0);
}
