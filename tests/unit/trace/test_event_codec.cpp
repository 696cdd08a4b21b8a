#include <doctest/doctest.h>

#include "event_codec.h"
#include "event_samples.h"

using namespace rw;

TEST_CASE("every event kind survives an encode/decode round trip")
{
    auto events = testing::sample_events(700);
    std::vector<uint8_t> buf;
    for (const auto& e : events)
        encode_event(e, buf);
    ByteReader r(buf);
    for (const auto& e : events) {
        Event d = decode_event(r);
        CHECK(d == e);
    }
    CHECK(r.done());
}

TEST_CASE("decoding into one event, as a trace reader does, leaves nothing of the event before")
{
    auto events = testing::sample_events(300);
    // Neighbours that differ in what a syscall carries: a range read from a
    // file copy, then plain bytes; a mapped file, then none; many ranges, then one.
    SyscallEvent from_file;
    from_file.nr = 0;
    MemoryRange copied;
    copied.dir = Direction::Out;
    copied.length = 64;
    copied.file_copy = "0123456789abcdef0123456789abcdef";
    copied.file_offset = 4096;
    from_file.memory = {copied, copied};
    from_file.file = FileRef{1, 2, 3, 4, "0123456789abcdef0123456789abcdef", "/lib/liby.so"};
    SyscallEvent plain;
    plain.nr = 1;
    MemoryRange written;
    written.dir = Direction::In;
    written.length = 3;
    written.bytes = {1, 2, 3};
    plain.memory = {written};
    events.insert(events.begin(), {from_file, plain, from_file, SyscallEvent{}, plain});
    std::vector<uint8_t> buf;
    for (const auto& e : events)
        encode_event(e, buf);
    ByteReader r(buf);
    Event reused;
    for (const auto& e : events) {
        decode_event(r, reused);
        CHECK(reused == e);
    }
    CHECK(r.done());
}

TEST_CASE("varints and zigzag values at their limits")
{
    std::vector<uint8_t> buf;
    ByteWriter w(buf);
    const uint64_t u[] = {0, 1, 127, 128, 16383, 16384, UINT32_MAX, UINT64_MAX};
    const int64_t s[] = {0, -1, 1, -64, 64, INT64_MIN, INT64_MAX};
    for (uint64_t v : u)
        w.varint(v);
    for (int64_t v : s)
        w.svarint(v);
    ByteReader r(buf);
    for (uint64_t v : u)
        CHECK(r.varint() == v);
    for (int64_t v : s)
        CHECK(r.svarint() == v);
    CHECK(r.done());
}

TEST_CASE("malformed input is a FormatError, never a crash or an overread")
{
    auto events = testing::sample_events(21);
    std::vector<uint8_t> buf;
    for (const auto& e : events)
        encode_event(e, buf);
    // Every prefix of the encoding either decodes whole events or throws.
    for (size_t cut = 0; cut < buf.size(); cut += 7) {
        std::vector<uint8_t> part(buf.begin(), buf.begin() + static_cast<long>(cut));
        ByteReader r(part);
        try {
            while (!r.done())
                decode_event(r);
        } catch (const FormatError&) {
        }
    }
    std::vector<uint8_t> bad = {99};
    ByteReader r(bad);
    CHECK_THROWS_AS(decode_event(r), FormatError);
    std::vector<uint8_t> huge = {3, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}; // exec with a 4 GiB filename
    ByteReader r2(huge);
    CHECK_THROWS_AS(decode_event(r2), FormatError);
}

TEST_CASE("what the recorder never writes is refused as corrupt, not handed to replay")
{
    auto refused = [](const Event& e) {
        std::vector<uint8_t> buf;
        encode_event(e, buf);
        ByteReader r(buf);
        CHECK_THROWS_AS(decode_event(r), FormatError);
    };
    // An output kept as a hash only: replay could neither restore it nor
    // size its comparison by anything but an untrusted length.
    SyscallEvent s;
    s.nr = 0;
    MemoryRange out;
    out.dir = Direction::Out;
    out.hashed_only = true;
    out.length = uint64_t(1) << 60;
    s.memory.push_back(out);
    refused(s);
    // A signal number outside 1..64.
    for (int signo : {0, -1, 65, 1 << 20}) {
        SignalEvent g;
        g.signo = signo;
        g.kind = SignalKind::Fault;
        refused(g);
    }
    // Range bits the format does not define.
    std::vector<uint8_t> buf;
    SyscallEvent in;
    MemoryRange r;
    r.dir = Direction::In;
    r.bytes = {1, 2, 3};
    r.length = 3;
    in.memory.push_back(r);
    encode_event(in, buf);
    // tag, seq, tid, tgid, nr, 6 args, ret, ip, sp, exit_time, flags, count, addr, buffer: one byte each.
    size_t bits_at = 1 + 4 + 6 + 5 + 1 + 1 + 1;
    REQUIRE(buf[bits_at] == 0);
    buf[bits_at] = 0x80;
    ByteReader reader(buf);
    CHECK_THROWS_AS(decode_event(reader), FormatError);
}
