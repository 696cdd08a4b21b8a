#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "trace_dir.h"
#include "trace_meta.h"

using namespace rw;
namespace fs = std::filesystem;

TEST_CASE("meta.json and end.json round trip")
{
    char tmpl[] = "/tmp/rewind-meta-XXXXXX";
    fs::path dir = mkdtemp(tmpl);
    TraceMeta m;
    m.format_version = 1;
    m.argv = {"ls", "-l"};
    m.envp = {"A=b"};
    m.cpu_flags = {"avx2", "rdrand"};
    m.notes = {"x"};
    m.kernel_release = "6.18";
    write_meta(dir, m);
    TraceMeta::Attached a;
    a.pid = 40;
    a.executable = "/usr/sbin/nginx";
    a.auxv = {6, 4096, 0, 0};
    a.threads = 1;
    a.pause_seconds = 0.04;
    a.start_image = "start";
    a.mappings = {{0x1000, 0x2000, "r-xp", 0, "/usr/sbin/nginx", "ab12"}};
    TraceMeta::Attached::Process below;
    below.pid = 41;
    below.parent = 40;
    below.argv = {"nginx: worker process", std::string("\xff\x00x", 3)};
    below.executable = "/usr/sbin/nginx";
    below.auxv = {6, 4096};
    below.threads = 2;
    below.mappings = {{0x7000, 0x8000, "rw-s", 0, "/dev/zero (deleted)", ""}};
    a.descendants = {below};
    m.attached = a;
    write_meta(dir, m);
    TraceMeta back = read_meta(dir);
    CHECK(back.argv == m.argv);
    CHECK(back.cpu_flags == m.cpu_flags);
    CHECK(back.kernel_release == "6.18");
    REQUIRE(back.attached);
    CHECK(back.attached->pid == 40);
    CHECK(back.attached->mappings == a.mappings);
    REQUIRE(back.attached->descendants.size() == 1);
    const auto& d = back.attached->descendants[0];
    CHECK(d.pid == 41);
    CHECK(d.parent == 40);
    CHECK(d.argv == below.argv);
    CHECK(d.executable == below.executable);
    CHECK(d.auxv == below.auxv);
    CHECK(d.threads == 2);
    CHECK(d.mappings == below.mappings);

    CHECK_FALSE(read_end(dir).has_value());
    TraceEnd e;
    e.exit = ExitStatus::from_wait_status(SIGSEGV | 0x80);
    e.complete = false;
    e.problems = {"lost"};
    e.syscall_counts = {{"read", 3}};
    e.refusal = RecordRefusal{57, 1234, "process 1234 called ptrace(PTRACE_TRACEME)"};
    write_end(dir, e);
    auto eb = read_end(dir);
    REQUIRE(eb);
    CHECK(eb->exit.signaled);
    CHECK(eb->exit.signal == SIGSEGV);
    CHECK(eb->exit.shell_status() == 128 + SIGSEGV);
    CHECK(eb->problems == e.problems);
    CHECK(eb->syscall_counts.at("read") == 3);
    REQUIRE(eb->refusal);
    CHECK(eb->refusal->event == 57);
    CHECK(eb->refusal->tid == 1234);
    CHECK(eb->refusal->why == e.refusal->why);
    // A trace that was not refused says nothing of it.
    e.refusal.reset();
    write_end(dir, e);
    CHECK_FALSE(read_end(dir)->refusal.has_value());
    // Files mapped shared and writable: unknown (older traces, attached
    // ones), none, or some.
    CHECK_FALSE(read_end(dir)->files_mapped_shared_writable.has_value());
    e.files_mapped_shared_writable.emplace();
    write_end(dir, e);
    REQUIRE(read_end(dir)->files_mapped_shared_writable.has_value());
    CHECK(read_end(dir)->files_mapped_shared_writable->empty());
    e.files_mapped_shared_writable->push_back({7, 42});
    write_end(dir, e);
    CHECK(read_end(dir)->files_mapped_shared_writable == std::vector<FileIdentity>{{7, 42}});
    fs::remove_all(dir);
}

TEST_CASE("trace directories are private and named after the program")
{
    char tmpl[] = "/tmp/rewind-root-XXXXXX";
    fs::path root = mkdtemp(tmpl);
    setenv("REWIND_DIR", root.c_str(), 1);
    fs::path a = create_trace_dir(std::nullopt, "my prog");
    fs::path b = create_trace_dir(std::nullopt, "my prog");
    CHECK(a.filename() == "my_prog-0");
    CHECK(b.filename() == "my_prog-1");
    struct stat st {};
    REQUIRE(stat(a.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    REQUIRE(stat((a / "files").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);

    CHECK_THROWS_AS(resolve_trace(std::nullopt), TraceDirError); // no latest yet
    CHECK_THROWS_WITH_AS(resolve_trace(std::string("nope")), doctest::Contains("no trace named"), TraceDirError);
    CHECK_THROWS_AS(create_trace_dir(fs::path(a), "x"), TraceDirError); // exists, not empty
    fs::remove_all(root);
    unsetenv("REWIND_DIR");
}
