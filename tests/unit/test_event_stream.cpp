#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

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
