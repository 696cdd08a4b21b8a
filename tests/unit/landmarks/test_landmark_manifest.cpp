#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "landmark_key.h"
#include "landmark_manifest.h"
#include "stop_waiter.h"

using namespace rw;
using namespace rw::perfclock;
using namespace rw::replay;
namespace fs = std::filesystem;

namespace {

fs::path temp_dir()
{
    char tmpl[] = "/tmp/rewind-manifest-XXXXXX";
    return mkdtemp(tmpl);
}

// Landmark keys of the test's own, not of the user running it.
struct OwnConfigHome {
    fs::path dir = temp_dir();
    OwnConfigHome() { ::setenv("XDG_CONFIG_HOME", dir.c_str(), 1); }
    ~OwnConfigHome()
    {
        ::unsetenv("XDG_CONFIG_HOME");
        fs::remove_all(dir);
    }
};

// A snapshot's bookkeeping as a two-process, three-thread replay has it.
void fill(ReplaySnapshot& s)
{
    s.groups.push_back({100, StdioFds::inherited()});
    s.groups.push_back({105, StdioFds::from_streams({{1, 1}, {7, 2}})});
    s.vms.push_back({0, 0x7ffff7e00000});
    s.vms.push_back({3, 0});
    ReplaySnapshot::TaskCopy main;
    main.recorded_tid = 100;
    main.pid = 4000;
    main.regs.words[Registers::RIP] = 0x401000;
    main.regs.words[Registers::ORIG_RAX] = 1;
    main.last_syscall_seq = 41;
    main.clear_child_tid = 0x7ffff7d8aa10;
    main.last_resume = Resume::Emulate;
    s.tasks.push_back(main);
    ReplaySnapshot::TaskCopy thread;
    thread.recorded_tid = 101;
    thread.regs.words[Registers::RSP] = 0x7ffff7a00f00;
    thread.state.xstate = {0x7f, 0x03, 0x00, 0xff};
    thread.state.sigmask = 1ull << 16;
    thread.state.robust_head = 0x7ffff7a009e0;
    thread.state.robust_len = 24;
    thread.alt_stack = true;
    s.tasks.push_back(thread);
    ReplaySnapshot::TaskCopy child;
    child.recorded_tid = 105;
    child.pid = 4010;
    child.group = 1;
    child.vm = 1;
    child.vfork_child = 0;
    child.child_settid = 0x1234;
    s.tasks.push_back(child);
    StopInfo ended{StopInfo::Kind::Exited};
    ended.exit_code = 3;
    s.finished[102] = ended;
    s.source.cursor = 57;
    s.source.taken_ahead = {59, 60};
    s.initial_tid = 100;
    s.next_vm_id = 4;
    s.warned_unechoed = true;
}

LandmarkManifest sample_manifest(const fs::path& dir)
{
    fs::create_directories(dir / "p0");
    std::ofstream(dir / "p0" / "pages-1.img") << std::string(5000, 'x');
    std::ofstream(dir / "p0" / "core-1.img") << "core";
    LandmarkManifest m;
    m.position = Position{57, {}};
    m.trace_events = 200;
    m.trace_id = "1700000000/bin/true";
    m.mounts = {{"/usr/bin/true", "00ff"}, {"/usr/lib/libc.so.6", "abcd"}};
    m.processes = {"p0"};
    m.files = {describe_file(dir, "p0/core-1.img"), describe_file(dir, "p0/pages-1.img")};
    m.state = nlohmann::json{{"any", 1}};
    m.dump_seconds = 0.25;
    m.image_bytes = 5004;
    return m;
}

} // namespace

TEST_CASE("landmark manifest: the replayer's bookkeeping survives JSON")
{
    StopWaiter waiter;
    ReplaySnapshot a(waiter);
    fill(a);
    nlohmann::json j = snapshot_state_to_json(a);
    ReplaySnapshot b(waiter);
    // The copies are the restored processes, in order: not the dumped pids.
    snapshot_state_from_json(j, {7001, 7002}, b);
    REQUIRE(b.tasks.size() == 3);
    CHECK(b.tasks[0].pid == 7001);
    CHECK(b.tasks[1].pid == 0);
    CHECK(b.tasks[2].pid == 7002);
    for (size_t i = 0; i < 3; i++) {
        CHECK(b.tasks[i].recorded_tid == a.tasks[i].recorded_tid);
        CHECK(b.tasks[i].regs.words == a.tasks[i].regs.words);
        CHECK(b.tasks[i].state.xstate == a.tasks[i].state.xstate);
        CHECK(b.tasks[i].state.sigmask == a.tasks[i].state.sigmask);
        CHECK(b.tasks[i].state.robust_head == a.tasks[i].state.robust_head);
        CHECK(b.tasks[i].state.robust_len == a.tasks[i].state.robust_len);
        CHECK(b.tasks[i].group == a.tasks[i].group);
        CHECK(b.tasks[i].vm == a.tasks[i].vm);
        CHECK(b.tasks[i].last_syscall_seq == a.tasks[i].last_syscall_seq);
        CHECK(b.tasks[i].last_resume == a.tasks[i].last_resume);
        CHECK(b.tasks[i].child_settid == a.tasks[i].child_settid);
        CHECK(b.tasks[i].clear_child_tid == a.tasks[i].clear_child_tid);
        CHECK(b.tasks[i].alt_stack == a.tasks[i].alt_stack);
    }
    REQUIRE(b.groups.size() == 2);
    CHECK(b.groups[1].recorded_tgid == 105);
    CHECK(b.groups[1].fds.streams() == std::map<int, int>{{1, 1}, {7, 2}});
    CHECK(b.groups[0].fds.stream_of(2) == 2);
    REQUIRE(b.vms.size() == 2);
    CHECK(b.vms[0].syscall_insn == 0x7ffff7e00000);
    CHECK(b.vms[1].id == 3);
    REQUIRE(b.finished.count(102));
    CHECK(b.finished.at(102).kind == StopInfo::Kind::Exited);
    CHECK(b.finished.at(102).exit_code == 3);
    CHECK(b.source.cursor == 57);
    CHECK(b.source.taken_ahead == std::set<uint64_t>{59, 60});
    CHECK(b.initial_tid == 100);
    CHECK(b.next_vm_id == 4);
    CHECK(b.warned_unechoed);
    // A process copy the restore did not bring back is refused.
    ReplaySnapshot c(waiter);
    CHECK_THROWS_WITH_AS(snapshot_state_from_json(j, {7001}, c), doctest::Contains("names process copy 1"),
                         std::runtime_error);
    for (auto& t : a.tasks)
        t.pid = 0; // (the destructor would kill them)
    for (auto& t : b.tasks)
        t.pid = 0;
}

TEST_CASE("landmark manifest: written, read back, and checked")
{
    OwnConfigHome config;
    fs::path dir = temp_dir();
    LandmarkManifest m = sample_manifest(dir);
    write_manifest(dir, m);
    LandmarkManifest r = read_manifest(dir);
    CHECK(r.position == m.position);
    CHECK(r.trace_events == 200);
    CHECK(r.trace_id == m.trace_id);
    CHECK(r.mounts == m.mounts);
    CHECK(r.processes == m.processes);
    CHECK(r.files == m.files);
    CHECK(r.state == m.state);
    CHECK(r.image_bytes == 5004);
    CHECK(r.authentic);
    CHECK(verify_files(dir, r).empty());

    SUBCASE("an image file changed, of the same size")
    {
        std::ofstream(dir / "p0" / "pages-1.img") << std::string(4999, 'x') << "y";
        auto problems = verify_files(dir, r);
        REQUIRE(problems.size() == 1);
        CHECK(problems[0] == "p0/pages-1.img does not match its checksum");
    }
    SUBCASE("an image file missing or cut short")
    {
        fs::remove(dir / "p0" / "core-1.img");
        std::ofstream(dir / "p0" / "pages-1.img") << "xx";
        auto problems = verify_files(dir, r);
        REQUIRE(problems.size() == 2);
        CHECK(problems[0] == "p0/core-1.img is missing");
        CHECK(problems[1] == "p0/pages-1.img has 2 bytes, not 5000");
    }
    SUBCASE("the manifest edited")
    {
        std::ifstream in(dir / kManifestName);
        std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        auto at = text.find("\"event\": 57");
        REQUIRE(at != std::string::npos);
        text.replace(at, 11, "\"event\": 58");
        std::ofstream(dir / kManifestName) << text;
        CHECK_THROWS_WITH_AS(read_manifest(dir), doctest::Contains("checksum does not match"), std::runtime_error);
    }
    SUBCASE("the manifest missing, or not JSON")
    {
        fs::remove(dir / kManifestName);
        CHECK_THROWS_WITH_AS(read_manifest(dir), doctest::Contains("manifest is missing"), std::runtime_error);
        std::ofstream(dir / kManifestName) << "{\"format\": 1,";
        CHECK_THROWS_WITH_AS(read_manifest(dir), doctest::Contains("not valid JSON"), std::runtime_error);
    }
    SUBCASE("a file outside the landmark is refused")
    {
        m.files.push_back({"../meta.json", 1, "00", ""});
        CHECK_THROWS_WITH_AS(LandmarkManifest::from_json(m.to_json()), doctest::Contains("outside the landmark"),
                             std::runtime_error);
    }
    fs::remove_all(dir);
}

TEST_CASE("landmark manifest: authentic only when this user's key signed it")
{
    OwnConfigHome config;
    fs::path dir = temp_dir();
    LandmarkManifest m = sample_manifest(dir);
    write_manifest(dir, m);
    fs::path key = LandmarkKey::path();
    CHECK(key == config.dir / "rewind" / "landmark.key");
    CHECK(fs::file_size(key) == 32);
    CHECK((fs::status(key).permissions() & fs::perms::all) == (fs::perms::owner_read | fs::perms::owner_write));
    CHECK(read_manifest(dir).authentic);

    SUBCASE("a key others can read is not used")
    {
        fs::permissions(key, fs::perms::group_read, fs::perm_options::add);
        LandmarkManifest r = read_manifest(dir);
        CHECK_FALSE(r.authentic);
        CHECK(r.not_authentic.find("not private to this user") != std::string::npos);
    }
    SUBCASE("another user's (or machine's) key")
    {
        OwnConfigHome other;
        LandmarkManifest r = read_manifest(dir);
        CHECK_FALSE(r.authentic);
        CHECK(r.not_authentic.find("has no landmark key") != std::string::npos);
        fs::path dir2 = temp_dir();
        write_manifest(dir2, sample_manifest(dir2)); // makes this user's key
        r = read_manifest(dir);
        CHECK_FALSE(r.authentic);
        CHECK(r.not_authentic.find("MAC does not match") != std::string::npos);
        CHECK(read_manifest(dir2).authentic);
        fs::remove_all(dir2);
    }
    SUBCASE("not signed at all")
    {
        std::ofstream(dir / kManifestName) << m.to_json().dump(1);
        LandmarkManifest r = read_manifest(dir);
        CHECK_FALSE(r.authentic);
        CHECK(r.not_authentic.find("not signed") != std::string::npos);
    }
    SUBCASE("signed, but without the SHA-256 that ties the images to the MAC")
    {
        LandmarkKey k = LandmarkKey::mine_or_new();
        for (auto& f : m.files)
            f.sha256.clear();
        std::ofstream(dir / kManifestName) << m.to_json(&k).dump(1);
        CHECK_THROWS_WITH_AS(read_manifest(dir), doctest::Contains("no SHA-256"), std::runtime_error);
    }
    fs::remove_all(dir);
}
