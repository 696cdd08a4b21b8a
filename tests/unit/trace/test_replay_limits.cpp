#include <doctest/doctest.h>
#include <sys/syscall.h>

#include "replay_limits.h"

using namespace rw;

namespace {

SyscallEvent call(int nr, int64_t ret, uint32_t flags = 0)
{
    SyscallEvent e;
    e.nr = nr;
    e.ret = ret;
    e.flags = flags;
    return e;
}

} // namespace

TEST_CASE("a call that failed changed nothing: replay passes it, whatever the call")
{
    // A number no kernel defines, and -1 (rt_sigreturn's exit looks alike).
    CHECK_FALSE(replay_limit(call(600, -38, kSyscallUnknown)).has_value());
    CHECK_FALSE(replay_limit(call(-1, -38, kSyscallUnknown)).has_value());
    // A subcommand the table does not know (fcntl 9999), interrupted calls.
    CHECK_FALSE(replay_limit(call(SYS_fcntl, -22, kSyscallUnknownSubcommand)).has_value());
    CHECK_FALSE(replay_limit(call(600, -512, kSyscallUnknown)).has_value());
    // A call the table refuses, when it failed.
    CHECK_FALSE(replay_limit(call(SYS_shmat, -1, 0)).has_value());
}

TEST_CASE("a call of unknown or unreproducible effects that succeeded stops replay, saying why")
{
    auto unknown = replay_limit(call(600, 0, kSyscallUnknown));
    REQUIRE(unknown.has_value());
    CHECK(unknown->find("syscall_600 has effects rewind does not know") != std::string::npos);
    auto subcommand = replay_limit(call(SYS_ioctl, 0, kSyscallUnknownSubcommand));
    REQUIRE(subcommand.has_value());
    CHECK(subcommand->find("ioctl") != std::string::npos);
    auto refused = replay_limit(call(SYS_io_uring_setup, 3, 0));
    REQUIRE(refused.has_value());
    CHECK(refused->find("cannot be replayed") != std::string::npos);
    // Below the kernel's error range: a result, not an error.
    CHECK(replay_limit(call(600, -4096, kSyscallUnknown)).has_value());
    // A number the table does not have, unflagged: a damaged or crafted trace.
    CHECK(replay_limit(call(600, 0, 0)).has_value());
}

TEST_CASE("a call whose output the recorder could not size is refused, naming it")
{
    // A lookup in a map whose descriptor was replaced before it was read.
    SyscallEvent lookup = call(SYS_bpf, 0, kSyscallUnsized);
    lookup.args = {1 /* BPF_MAP_LOOKUP_ELEM */, 0x1000, 144, 0, 0, 0};
    auto why = replay_limit(lookup);
    REQUIRE(why.has_value());
    CHECK(why->find("bpf(BPF_MAP_LOOKUP_ELEM): the size of what it wrote") == 0);
    lookup.ret = -2; // it failed: nothing was written
    CHECK_FALSE(replay_limit(lookup).has_value());
}

TEST_CASE("a BPF program that writes into processes' memory is refused; one that does not is replayed")
{
    SyscallEvent load = call(SYS_bpf, 3);
    load.args = {5 /* BPF_PROG_LOAD */, 0x1000, 144, 0, 0, 0};
    MemoryRange insns;
    insns.buffer = 1;
    insns.dir = Direction::In;
    // r1 = 0; call bpf_probe_write_user (helper 36); exit
    insns.bytes = {0xb7, 0x01, 0, 0, 0, 0, 0, 0, 0x85, 0x00, 0, 0, 36, 0, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0};
    insns.length = insns.bytes.size();
    load.memory = {insns};
    auto why = replay_limit(load);
    REQUIRE(why.has_value());
    CHECK(why->find("bpf(BPF_PROG_LOAD) cannot be replayed: the program it loads calls bpf_probe_write_user") == 0);
    // A call of the program's own function 36 (src_reg 1) is no helper.
    load.memory[0].bytes[9] = 0x10;
    CHECK_FALSE(replay_limit(load).has_value());
    // Helper 35 (bpf_get_current_task): nothing outside the program.
    load.memory[0].bytes[9] = 0;
    load.memory[0].bytes[12] = 35;
    CHECK_FALSE(replay_limit(load).has_value());
}

TEST_CASE("a System V segment's attach replays if the recording made the segment, not if it looked it up")
{
    RecordedSegments segments;
    auto shmget = [](uint64_t key, uint64_t flags, int64_t id) {
        SyscallEvent e = call(SYS_shmget, id);
        e.args = {key, 4096, flags, 0, 0, 0};
        return e;
    };
    auto shmat = [](uint64_t id) {
        SyscallEvent e = call(SYS_shmat, 0x7f0000000000);
        e.args = {id, 0, 0, 0, 0, 0};
        return e;
    };
    CHECK(segments.note(shmget(0 /* IPC_PRIVATE */, 0600, 7)));
    CHECK(segments.note(shmget(0x1234, 01000 | 02000 | 0600 /* IPC_CREAT | IPC_EXCL */, 8)));
    CHECK_FALSE(segments.note(shmget(0x1234, 01000 | 0600 /* IPC_CREAT: perhaps found */, 9)));
    CHECK_FALSE(segments.note(shmget(0x1234, 0, 10)));
    SyscallEvent failed_get = shmget(0, 0600, -12);
    CHECK_FALSE(segments.note(failed_get));
    CHECK_FALSE(segments.attach_limit(shmat(7)).has_value());
    CHECK_FALSE(segments.attach_limit(shmat(8)).has_value());
    auto why = segments.attach_limit(shmat(9));
    REQUIRE(why.has_value());
    CHECK(why->find("shmat of System V segment 9 cannot be replayed: no shmget of the recording made it") == 0);
    CHECK(segments.attach_limit(shmat(10)).has_value());
    SyscallEvent failed_at = shmat(10);
    failed_at.ret = -22;
    CHECK_FALSE(segments.attach_limit(failed_at).has_value()); // it changed nothing
}
