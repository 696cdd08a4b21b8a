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
