// What replay does with the calls beyond the common ones: serves them,
// runs them for real, or refuses them and says why; the descriptors they
// make; subcommands found in an argument's upper bits.
#include <doctest/doctest.h>
#include <sys/syscall.h>

#include "syscall_table.h"

using namespace rw;

namespace {

ReplayAction action(int nr, std::initializer_list<uint64_t> a)
{
    uint64_t args[RW_MAX_ARGS] = {};
    size_t i = 0;
    for (uint64_t v : a)
        args[i++] = v;
    const SyscallInfo* info = find_syscall(nr);
    REQUIRE(info);
    return replay_action(*info, args);
}

FdEffect effect(int nr, std::initializer_list<uint64_t> a)
{
    uint64_t args[RW_MAX_ARGS] = {};
    size_t i = 0;
    for (uint64_t v : a)
        args[i++] = v;
    return fd_effect(nr, args);
}

} // namespace

TEST_CASE("bpf and perf_event_open are served from the log, with the descriptors they make")
{
    CHECK(action(SYS_bpf, {5 /* BPF_PROG_LOAD */, 0x1000, 144}) == ReplayAction::Emulate);
    CHECK(effect(SYS_bpf, {5 /* BPF_PROG_LOAD */, 0x1000, 144}) == FdEffect::NewFd);
    CHECK(effect(SYS_bpf, {1 /* BPF_MAP_LOOKUP_ELEM */, 0x1000, 144}) == FdEffect::None);
    CHECK(action(SYS_perf_event_open, {0x1000, 0, uint64_t(-1), uint64_t(-1), 0}) == ReplayAction::Emulate);
    CHECK(effect(SYS_perf_event_open, {0x1000, 0, uint64_t(-1), uint64_t(-1), 0}) == FdEffect::NewFd);
}
