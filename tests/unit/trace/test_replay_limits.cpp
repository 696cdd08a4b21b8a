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
    CHECK_FALSE(replay_limit(call(SYS_ptrace, -1, 0)).has_value());
}

TEST_CASE("a call of unknown or unreproducible effects that succeeded stops replay, saying why")
{
    auto unknown = replay_limit(call(600, 0, kSyscallUnknown));
    REQUIRE(unknown.has_value());
    CHECK(unknown->find("syscall_600 has effects rewind does not know") != std::string::npos);
    auto subcommand = replay_limit(call(SYS_ioctl, 0, kSyscallUnknownSubcommand));
    REQUIRE(subcommand.has_value());
    CHECK(subcommand->find("ioctl") != std::string::npos);
    auto refused = replay_limit(call(SYS_ptrace, 0, 0));
    REQUIRE(refused.has_value());
    CHECK(refused->find("cannot be replayed") != std::string::npos);
    // Below the kernel's error range: a result, not an error.
    CHECK(replay_limit(call(600, -4096, kSyscallUnknown)).has_value());
    // A number the table does not have, unflagged: a damaged or crafted trace.
    CHECK(replay_limit(call(600, 0, 0)).has_value());
}
