#include <doctest/doctest.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cstring>
#include <map>
#include <vector>

#include "fake_memory.h"
#include "syscall_memory.h"
#include "syscall_table.h"

using namespace rw;

namespace {

using test::FakeMemory;

WalkResult walk(int nr, std::initializer_list<uint64_t> a, int64_t ret, const FakeMemory& mem)
{
    uint64_t args[RW_MAX_ARGS] = {};
    size_t i = 0;
    for (uint64_t v : a)
        args[i++] = v;
    return walk_buffers(resolve_spec(nr, args).spec, args, ret, mem.reader());
}

} // namespace

TEST_CASE("read: the return value bounds the output")
{
    FakeMemory mem;
    auto r = walk(SYS_read, {3, 0x1000, 4096}, 100, mem);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].addr == 0x1000);
    CHECK(r.segments[0].len == 100);
    CHECK(r.segments[0].dir == Direction::Out);
    CHECK(walk(SYS_read, {3, 0x1000, 4096}, -11, mem).segments.empty());
    CHECK(walk(SYS_read, {3, 0x1000, 4096}, 0, mem).segments.empty());
}

TEST_CASE("readv: iovecs are filled in order up to the return value")
{
    FakeMemory mem;
    uint64_t iov[6] = {0x2000, 10, 0x3000, 20, 0x4000, 30};
    mem.put(0x100, iov, sizeof(iov));
    auto r = walk(SYS_readv, {3, 0x100, 3}, 25, mem);
    REQUIRE(r.status == WalkResult::Status::Ok);
    REQUIRE(r.segments.size() == 2);
    CHECK(r.segments[0].addr == 0x2000);
    CHECK(r.segments[0].len == 10);
    CHECK(r.segments[1].addr == 0x3000);
    CHECK(r.segments[1].len == 15);
}

TEST_CASE("an unreadable iovec array is a fault, not a silent gap")
{
    FakeMemory mem;
    auto r = walk(SYS_readv, {3, 0x100, 3}, 25, mem);
    CHECK(r.status == WalkResult::Status::Fault);
}

TEST_CASE("recvmsg: written-back header fields, name, data and control")
{
    FakeMemory mem;
    uint64_t iov[2] = {0x5000, 64};
    mem.put(0x400, iov, sizeof(iov));
    uint8_t hdr[56] = {};
    uint64_t name = 0x6000, iovp = 0x400, iovlen = 1, control = 0x7000, controllen = 24;
    uint32_t namelen = 16;
    std::memcpy(hdr + 0, &name, 8);
    std::memcpy(hdr + 8, &namelen, 4);
    std::memcpy(hdr + 16, &iovp, 8);
    std::memcpy(hdr + 24, &iovlen, 8);
    std::memcpy(hdr + 32, &control, 8);
    std::memcpy(hdr + 40, &controllen, 8);
    mem.put(0x300, hdr, sizeof(hdr));
    auto r = walk(SYS_recvmsg, {3, 0x300, 0}, 40, mem);
    REQUIRE(r.status == WalkResult::Status::Ok);
    std::map<uint64_t, uint64_t> got;
    for (const auto& s : r.segments)
        got[s.addr] = s.len;
    CHECK(got[0x300 + 8] == 4);  // msg_namelen
    CHECK(got[0x300 + 40] == 8); // msg_controllen
    CHECK(got[0x300 + 48] == 4); // msg_flags
    CHECK(got[0x6000] == 16);
    CHECK(got[0x5000] == 40);
    CHECK(got[0x7000] == 24);
}

TEST_CASE("select: fd sets sized by nfds, timeout written back")
{
    FakeMemory mem;
    auto r = walk(SYS_select, {70, 0x100, 0, 0x200, 0x300}, 1, mem);
    REQUIRE(r.segments.size() == 3);
    CHECK(r.segments[0].len == 16); // 70 descriptors need two words
    CHECK(r.segments[1].addr == 0x200);
    CHECK(r.segments[2].addr == 0x300);
    CHECK(r.segments[2].len == 16);
}

TEST_CASE("accept4: the address length comes from the socklen after the call, capped")
{
    FakeMemory mem;
    uint32_t len = 16;
    mem.put(0x800, &len, 4);
    auto r = walk(SYS_accept4, {3, 0x900, 0x800, 0}, 5, mem);
    REQUIRE(r.segments.size() == 2);
    CHECK(r.segments[0].addr == 0x900);
    CHECK(r.segments[0].len == 16);
    CHECK(r.segments[1].addr == 0x800);
    len = 4096;
    mem.put(0x800, &len, 4);
    CHECK(walk(SYS_accept4, {3, 0x900, 0x800, 0}, 5, mem).segments[0].len == 128);
}

TEST_CASE("paths are input strings; failed execve keeps its path")
{
    FakeMemory mem;
    auto r = walk(SYS_openat, {static_cast<uint64_t>(-100), 0xa00, 0, 0}, 3, mem);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].is_string);
    CHECK(r.segments[0].dir == Direction::In);
    CHECK(walk(SYS_execve, {0xa00, 0, 0}, -2, mem).segments.size() == 1);
    CHECK(walk(SYS_execve, {0xa00, 0, 0}, 0, mem).segments.empty());
}

TEST_CASE("ioctl sizes: table entries, encoded numbers, unknown requests")
{
    FakeMemory mem;
    CHECK(walk(SYS_ioctl, {1, 0x5413, 0xb00}, 0, mem).segments.at(0).len == 8); // TIOCGWINSZ
    auto r = walk(SYS_ioctl, {1, 0x80045430, 0xb00}, 0, mem);                   // _IOR, 4 bytes
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].len == 4);
    CHECK(r.segments[0].dir == Direction::Out);
    CHECK(walk(SYS_ioctl, {1, 0x5499, 0xb00}, 0, mem).segments.empty());
}

TEST_CASE("finalize_memory merges chunks and keeps large inputs as hashes")
{
    SyscallEvent e;
    e.nr = SYS_write;
    e.args[0] = 5;
    MemoryRange a, b;
    a.addr = 0x1000;
    a.dir = b.dir = Direction::In;
    a.bytes.assign(3000, 'x');
    b.addr = 0x1000 + 3000;
    b.bytes.assign(3000, 'y');
    e.memory = {a, b};
    finalize_memory(e);
    REQUIRE(e.memory.size() == 1);
    CHECK(e.memory[0].length == 6000);
    CHECK(e.memory[0].hashed_only);
    CHECK(e.memory[0].bytes.empty());

    e.args[0] = 1; // stdout: kept in full, replay re-emits it
    e.memory = {a, b};
    finalize_memory(e);
    CHECK_FALSE(e.memory[0].hashed_only);
    CHECK(e.memory[0].bytes.size() == 6000);
}

TEST_CASE("clone: the parent's tid is an output only when its flags ask for it")
{
    FakeMemory mem;
    CHECK(walk(SYS_clone, {SIGCHLD, 0, 0x3, 0x5}, 42, mem).segments.empty());
    auto settid = walk(SYS_clone, {CLONE_PARENT_SETTID | SIGCHLD, 0, 0x7000, 0x5}, 42, mem);
    REQUIRE(settid.segments.size() == 1);
    CHECK(settid.segments[0].addr == 0x7000);
    CHECK(settid.segments[0].len == 4);
    CHECK(walk(SYS_clone, {CLONE_PIDFD | SIGCHLD, 0, 0x7000, 0x5}, 42, mem).segments.size() == 1);
    CHECK(walk(SYS_clone, {CLONE_PARENT_SETTID | SIGCHLD, 0, 0x7000, 0x5}, -11, mem).segments.empty());
}

TEST_CASE("semop: six bytes for each sembuf; mq_timedreceive: the bytes it returned, and the priority if asked")
{
    FakeMemory mem;
    auto r = walk(SYS_semop, {7, 0x2000, 3}, 0, mem);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].len == 18);
    CHECK(r.segments[0].dir == Direction::In);
    r = walk(SYS_semtimedop, {7, 0x2000, 2, 0x3000}, 0, mem);
    REQUIRE(r.segments.size() == 2);
    CHECK(r.segments[0].len == 12);
    CHECK(r.segments[1].len == 16); // the timeout

    r = walk(SYS_mq_timedreceive, {3, 0x4000, 8192, 0x5000, 0}, 6, mem);
    REQUIRE(r.segments.size() == 2);
    CHECK((r.segments[0].addr == 0x4000 && r.segments[0].len == 6 && r.segments[0].dir == Direction::Out));
    CHECK((r.segments[1].addr == 0x5000 && r.segments[1].len == 4 && r.segments[1].dir == Direction::Out));
    r = walk(SYS_mq_timedreceive, {3, 0x4000, 8192, 0, 0}, 6, mem);
    REQUIRE(r.segments.size() == 1);
    CHECK(r.segments[0].len == 6);
    // Timed out: only the deadline it read.
    r = walk(SYS_mq_timedreceive, {3, 0x4000, 8192, 0x5000, 0x6000}, -110, mem);
    REQUIRE(r.segments.size() == 1);
    CHECK((r.segments[0].addr == 0x6000 && r.segments[0].dir == Direction::In));
}
