// A trace is untrusted input (someone else's recording, a damaged disk):
// the names it gives its file copies, the copies themselves and its small
// files are checked before anything opens, maps or executes them.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "bytes.h"
#include "event_codec.h"
#include "event_stream.h"
#include "file_store.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_meta.h"

using namespace rw;
namespace fs = std::filesystem;

namespace {

// A minimal trace directory: meta.json, an empty event stream, files/.
struct TempTrace {
    fs::path dir;
    TempTrace()
    {
        char tmpl[] = "/tmp/rwtest-untrusted-XXXXXX";
        dir = mkdtemp(tmpl);
        fs::create_directory(dir / trace_files::kFiles);
        TraceMeta m;
        m.format_version = kTraceFormatVersion;
        write_meta(dir, m);
        EventStreamWriter(dir / trace_files::kEvents).flush();
    }
    ~TempTrace() { fs::remove_all(dir); }

    // Stores `content` as the recorder does; returns its name.
    std::string store(const std::string& content) const
    {
        fs::path src = dir / "source";
        std::ofstream(src, std::ios::binary) << content;
        std::string hash = FileStore(dir / trace_files::kFiles).store_path(src);
        fs::remove(src);
        return hash;
    }
};

// A check that would block forever (a FIFO, /dev/zero) fails the test
// instead of hanging it.
struct Deadline {
    Deadline()
    {
        std::signal(SIGALRM, [](int) {
            const char msg[] = "rewind_unit_tests: a check blocked for 20 s (it read a FIFO or a device)\n";
            (void)!::write(2, msg, sizeof msg - 1);
            ::_exit(1);
        });
        ::alarm(20);
    }
    ~Deadline()
    {
        ::alarm(0);
        std::signal(SIGALRM, SIG_DFL);
    }
};

} // namespace

TEST_CASE("a file copy's name must be the content hash the store writes")
{
    TempTrace t;
    std::string hash = t.store("hello\n");
    CHECK(is_content_hash(hash));
    CHECK_FALSE(is_content_hash(""));
    CHECK_FALSE(is_content_hash(hash.substr(1)));
    CHECK_FALSE(is_content_hash(hash + "0"));
    std::string upper = hash;
    for (char& c : upper)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK_FALSE(is_content_hash(upper));
    CHECK_FALSE(is_content_hash("../../../tmp/x"));
    CHECK_FALSE(is_content_hash("/etc/passwd"));
    CHECK_FALSE(is_content_hash("0123456789abcdef0123456789abcde/"));

    Trace trace(t.dir);
    CHECK(trace.file_copy(hash) == t.dir / trace_files::kFiles / hash);
    CHECK_THROWS_AS(trace.file_copy("../../../tmp/x"), FormatError);
    CHECK_THROWS_AS(trace.file_copy(""), FormatError);
    std::string why;
    CHECK_THROWS_AS(trace.verified_file_copy("../../../etc/passwd", why), FormatError);
}

TEST_CASE("a copy is checked against its name before it is used")
{
    TempTrace t;
    std::string hash = t.store("the recorded program's bytes\n");
    std::string why;
    CHECK(Trace(t.dir).verified_file_copy(hash, why) == t.dir / trace_files::kFiles / hash);
    CHECK(why.empty());

    // One bit flipped (the copies are 0600: make it writable as any user).
    fs::path copy = t.dir / trace_files::kFiles / hash;
    fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
    {
        std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(4);
        f.put('R');
    }
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("has been altered") != std::string::npos);
    CHECK(why.find(hash) != std::string::npos);

    fs::remove(copy);
    why.clear();
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("cannot be read") != std::string::npos);
}

TEST_CASE("a copy that is not a regular file is refused, never followed")
{
    TempTrace t;
    std::string hash = t.store("x");
    fs::path copy = t.dir / trace_files::kFiles / hash;
    Deadline deadline;
    std::string why;

    // A symbolic link out of the trace: to a device that never ends...
    fs::remove(copy);
    fs::create_symlink("/dev/zero", copy);
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("not a regular file") != std::string::npos);

    // ...or to a host file (whatever it holds, it is not the trace's).
    fs::path host = t.dir / "host-file";
    std::ofstream(host) << "x";
    fs::remove(copy);
    fs::create_symlink(host, copy);
    why.clear();
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("not a regular file") != std::string::npos);

    // A FIFO would block the reader forever.
    fs::remove(copy);
    REQUIRE(::mkfifo(copy.c_str(), 0600) == 0);
    why.clear();
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("not a regular file") != std::string::npos);
}

TEST_CASE("end.json or meta.json that is not a regular file is refused, not waited on")
{
    TempTrace t;
    Deadline deadline;
    REQUIRE(::mkfifo((t.dir / trace_files::kEnd).c_str(), 0600) == 0);
    CHECK_THROWS_AS(read_end(t.dir), FormatError);
    fs::remove(t.dir / trace_files::kMeta);
    REQUIRE(::mkfifo((t.dir / trace_files::kMeta).c_str(), 0600) == 0);
    CHECK_THROWS_AS(read_meta(t.dir), FormatError);
}

TEST_CASE("a trace file that is a link is never read, and no message quotes a trace file")
{
    TempTrace t;
    Deadline deadline;
    // A secret of someone's that a JSON parser's error would quote.
    fs::path secret = t.dir / "secret";
    std::ofstream(secret) << "\"s3cr3t-value\n";
    write_end(t.dir, TraceEnd{});
    for (const char* name : {trace_files::kMeta, trace_files::kEnd, trace_files::kEvents}) {
        fs::path original = t.dir / "original";
        fs::rename(t.dir / name, original);
        fs::create_symlink(secret, t.dir / name);
        std::string message;
        try {
            Trace trace(t.dir);
            trace.events();
        } catch (const FormatError& e) {
            message = e.what();
        }
        CHECK(message.find("not a regular file but a symbolic link") != std::string::npos);
        CHECK(message.find("s3cr3t") == std::string::npos);
        fs::remove(t.dir / name);
        fs::rename(original, t.dir / name);
    }
    // Not valid JSON: the message says where, not what.
    fs::rename(secret, t.dir / trace_files::kMeta);
    std::string message;
    try {
        read_meta(t.dir);
    } catch (const FormatError& e) {
        message = e.what();
    }
    CHECK(message.find("is not valid JSON (a syntax error at byte") != std::string::npos);
    CHECK(message.find("s3cr3t") == std::string::npos);
}

TEST_CASE("a copy reached through a files/ that is a link is refused")
{
    TempTrace t;
    std::string hash = t.store("a copy with the right content\n");
    // The very copy, whole and right, but files/ leads elsewhere.
    fs::rename(t.dir / trace_files::kFiles, t.dir / "elsewhere");
    fs::create_directory_symlink(t.dir / "elsewhere", t.dir / trace_files::kFiles);
    std::string why;
    CHECK(Trace(t.dir).verified_file_copy(hash, why).empty());
    CHECK(why.find("is a symbolic link, not a directory") != std::string::npos);
}

namespace {

// A read of `length` bytes at `offset`, recorded by reference to `copy`.
SyscallEvent read_from_copy(const std::string& copy, uint64_t offset, uint64_t length)
{
    SyscallEvent e;
    e.nr = 17; // pread64
    e.ret = static_cast<int64_t>(length);
    MemoryRange m;
    m.dir = Direction::Out;
    m.length = length;
    m.file_copy = copy;
    m.file_offset = offset;
    e.memory.push_back(m);
    return e;
}

// What a trace reader makes of a stream holding one such read.
StreamEnd read_back(const TempTrace& t, const SyscallEvent& e, std::vector<uint8_t>& bytes)
{
    {
        fs::remove(t.dir / trace_files::kEvents);
        EventStreamWriter w(t.dir / trace_files::kEvents);
        w.append(e);
        w.flush();
    }
    EventStreamReader reader = Trace(t.dir).events();
    Event out;
    if (reader.next(out))
        bytes = std::get<SyscallEvent>(out).memory.at(0).bytes;
    return reader.end();
}

} // namespace

TEST_CASE("a read recorded by reference gets its bytes from the copy, and a bad copy ends the stream")
{
    TempTrace t;
    std::string hash = t.store("0123456789abcdef");
    std::vector<uint8_t> bytes;
    StreamEnd end = read_back(t, read_from_copy(hash, 4, 6), bytes);
    CHECK(end.kind == StreamEnd::Kind::Clean);
    CHECK(std::string(bytes.begin(), bytes.end()) == "456789");

    // Past the copy's end, or an absurd length: refused before anything is allocated.
    for (auto [offset, length] : {std::pair<uint64_t, uint64_t>{12, 10}, {0, uint64_t(1) << 60}, {uint64_t(-1), 1}}) {
        bytes.clear();
        end = read_back(t, read_from_copy(hash, offset, length), bytes);
        CHECK(end.kind == StreamEnd::Kind::Corrupt);
        CHECK(end.reason.find("holds no") != std::string::npos);
        CHECK(end.events == 0);
    }

    fs::path copy = t.dir / trace_files::kFiles / hash;
    fs::permissions(copy, fs::perms::owner_write, fs::perm_options::add);
    std::ofstream(copy, std::ios::binary) << "0123456789ABCDEF";
    end = read_back(t, read_from_copy(hash, 4, 6), bytes);
    CHECK(end.kind == StreamEnd::Kind::Corrupt);
    CHECK(end.reason.find("has been altered") != std::string::npos);
}

TEST_CASE("a read by reference must name a content hash and be a plain output")
{
    auto decodes = [](const SyscallEvent& e) {
        std::vector<uint8_t> buf;
        encode_event(e, buf);
        ByteReader r(buf);
        try {
            decode_event(r);
            return true;
        } catch (const FormatError&) {
            return false;
        }
    };
    std::string hash(32, 'a');
    CHECK(decodes(read_from_copy(hash, 0, 4)));
    CHECK_FALSE(decodes(read_from_copy("../../etc/passwd", 0, 4)));
    SyscallEvent in = read_from_copy(hash, 0, 4);
    in.memory[0].dir = Direction::In;
    CHECK_FALSE(decodes(in));
}
