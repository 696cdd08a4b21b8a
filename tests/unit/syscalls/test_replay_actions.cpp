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

std::string reason(int nr)
{
    const SyscallInfo* info = find_syscall(nr);
    REQUIRE(info != nullptr);
    return refusal_reason(*info);
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

TEST_CASE("refused calls say why, each its own reason")
{
    CHECK(reason(SYS_io_uring_setup).find("io_uring shares its rings") != std::string::npos);
    CHECK(reason(SYS_io_uring_enter).find("io_uring_enter cannot be replayed: io_uring shares") == 0);
    CHECK(reason(SYS_userfaultfd).find("page faults") != std::string::npos);
    // Every call replay refuses has a reason of its own.
    for (const SyscallInfo& info : all_syscalls())
        if (info.replay == ReplayAction::Refuse)
            CHECK_MESSAGE(!info.refusal.empty(), info.name);
}

TEST_CASE("System V IPC and POSIX message queues are served from the log; mq_open makes a descriptor")
{
    for (int nr : {SYS_msgget, SYS_msgsnd, SYS_msgrcv, SYS_msgctl, SYS_semget, SYS_semop, SYS_semtimedop, SYS_semctl,
                   SYS_shmget, SYS_shmctl, SYS_mq_open, SYS_mq_unlink, SYS_mq_timedsend, SYS_mq_timedreceive,
                   SYS_mq_notify, SYS_mq_getsetattr})
        CHECK_MESSAGE(action(nr, {3, 0, 0, 0x1000}) == ReplayAction::Emulate, nr);
    CHECK(effect(SYS_mq_open, {0x1000, 0102, 0600, 0x2000}) == FdEffect::NewFd);
    // Attached for real: the replay's own segment, at the recorded address.
    CHECK(action(SYS_shmat, {3, 0, 0}) == ReplayAction::AttachSegment);
    CHECK(action(SYS_shmdt, {0x1000}) == ReplayAction::ExecuteCheck);
}
