#include <doctest/doctest.h>
#include <sys/syscall.h>

#include <set>

#include "syscall_table.h"

using namespace rw;

TEST_CASE("every table entry is well formed")
{
    std::set<int> seen;
    for (const auto& s : all_syscalls()) {
        CAPTURE(s.name);
        CHECK(seen.insert(s.nr).second);
        CHECK(s.nr >= 0);
        CHECK(s.nr < RW_MAX_SYSCALL_NR);
        CHECK(!s.name.empty());
        CHECK(s.arg_formats.size() <= 6);
        CHECK((s.spec.flags & RW_SYS_KNOWN));
        CHECK(s.spec.nbufs <= RW_MAX_BUFS);
        for (int i = 0; i < s.spec.nbufs; i++) {
            const auto& b = s.spec.bufs[i];
            CHECK(b.kind > RW_SZ_NONE);
            CHECK(b.kind < RW_SZ_KIND_COUNT);
            CHECK(b.ptr_arg < RW_MAX_ARGS);
            CHECK(b.size_arg < RW_MAX_ARGS);
            CHECK(((b.flags & RW_BUF_IN) != 0) != ((b.flags & RW_BUF_OUT) != 0));
            // A string argument is shown from its captured input buffer.
            if (b.kind == RW_SZ_CSTRING && b.ptr_arg < s.arg_formats.size())
                CHECK(s.arg_formats[b.ptr_arg] == 's');
        }
        if (s.fd_arg >= 0)
            CHECK(s.arg_formats[static_cast<size_t>(s.fd_arg)] == 'f');
        CHECK(syscall_name(s.nr) == s.name);
        CHECK(syscall_number(s.name) == s.nr);
    }
}

TEST_CASE("the syscalls the recorder issue names are all described")
{
    for (const char* name : {"read",          "pread64",
                             "readv",         "recvfrom",
                             "recvmsg",       "getdents64",
                             "stat",          "lstat",
                             "fstat",         "newfstatat",
                             "statx",         "statfs",
                             "clock_gettime", "gettimeofday",
                             "time",          "getrandom",
                             "pipe2",         "socketpair",
                             "wait4",         "waitid",
                             "poll",          "ppoll",
                             "select",        "pselect6",
                             "epoll_wait",    "uname",
                             "sysinfo",       "getrlimit",
                             "prlimit64",     "getcwd",
                             "readlink",      "readlinkat",
                             "ioctl",         "sched_getaffinity",
                             "getsockname",   "getpeername",
                             "getsockopt",    "accept4",
                             "futex",         "execve",
                             "clone",         "clone3",
                             "fork",          "vfork",
                             "mmap"}) {
        CAPTURE(name);
        int nr = syscall_number(name);
        REQUIRE(nr >= 0);
        CHECK(find_syscall(nr) != nullptr);
    }
}

TEST_CASE("madvise advice that acts only on fork children runs in replay, for the program's own forks")
{
    const SyscallInfo* madvise = find_syscall(SYS_madvise);
    REQUIRE(madvise != nullptr);
    uint64_t dontfork[RW_MAX_ARGS] = {0x1000, 4096, 10}, wipeonfork[RW_MAX_ARGS] = {0x1000, 4096, 18},
             dontneed[RW_MAX_ARGS] = {0x1000, 4096, 4};
    CHECK(replay_action(*madvise, dontfork) == ReplayAction::ExecuteCheck);
    CHECK(replay_action(*madvise, wipeonfork) == ReplayAction::ExecuteCheck);
    CHECK(replay_action(*madvise, dontneed) == madvise->replay);
}

TEST_CASE("an rt_sigprocmask that only reads the mask is served from the log, one that sets it runs")
{
    const SyscallInfo* sigprocmask = find_syscall(SYS_rt_sigprocmask);
    REQUIRE(sigprocmask != nullptr);
    uint64_t query[RW_MAX_ARGS] = {0, 0, 0x7ffc0000, 8}, block[RW_MAX_ARGS] = {0, 0x7ffc0100, 0x7ffc0000, 8};
    CHECK(replay_action(*sigprocmask, query) == ReplayAction::Emulate);
    CHECK(replay_action(*sigprocmask, block) == ReplayAction::ExecuteCheck);
}

TEST_CASE("buffer descriptions of representative syscalls")
{
    const auto* read = find_syscall(SYS_read);
    REQUIRE(read);
    CHECK(read->spec.nbufs == 1);
    CHECK(read->spec.bufs[0].kind == RW_SZ_RET);
    CHECK(read->spec.bufs[0].ptr_arg == 1);
    CHECK((read->spec.bufs[0].flags & RW_BUF_OUT));
    CHECK(read->replay == ReplayAction::Emulate);

    const auto* statx = find_syscall(SYS_statx);
    REQUIRE(statx);
    CHECK(statx->spec.bufs[1].kind == RW_SZ_FIXED);
    CHECK(statx->spec.bufs[1].size == 256);

    CHECK(find_syscall(SYS_mmap)->replay == ReplayAction::Mmap);
    CHECK((find_syscall(SYS_mmap)->spec.flags & RW_SYS_MAPS_FILE));
    CHECK(find_syscall(SYS_brk)->replay == ReplayAction::ExecuteCheck);
    CHECK(find_syscall(SYS_execve)->replay == ReplayAction::Exec);
    CHECK(find_syscall(SYS_clone)->replay == ReplayAction::Clone);
    // A recorded tracer's requests are answered from the trace.
    CHECK(find_syscall(SYS_ptrace)->replay == ReplayAction::Emulate);
}

TEST_CASE("subcommands resolve like the kernel side resolves them")
{
    uint64_t args[RW_MAX_ARGS] = {1, 0x5401 /* TCGETS */, 0x1000, 0, 0, 0};
    auto r = resolve_spec(SYS_ioctl, args);
    CHECK(r.known);
    REQUIRE(r.subcommand);
    CHECK(r.subcommand->name == "TCGETS");
    CHECK(r.spec.bufs[0].size == 36);

    // _IOR('T', 0x30, unsigned int): size and direction are in the number.
    args[1] = 0x80045430;
    r = resolve_spec(SYS_ioctl, args);
    CHECK(r.known);
    CHECK(r.subcommand == nullptr);
    CHECK(r.spec.bufs[0].kind == RW_SZ_IOCTL);

    // A legacy number with no encoding and no table entry: effects unknown.
    args[1] = 0x5499;
    CHECK_FALSE(resolve_spec(SYS_ioctl, args).known);

    // futex: the private flag is masked off.
    uint64_t fargs[RW_MAX_ARGS] = {0x1000, 128 | 6 /* FUTEX_LOCK_PI_PRIVATE */, 0, 0, 0, 0};
    r = resolve_spec(SYS_futex, fargs);
    REQUIRE(r.subcommand);
    CHECK(r.subcommand->name == "FUTEX_LOCK_PI");

    uint64_t unknown[RW_MAX_ARGS] = {};
    CHECK_FALSE(resolve_spec(SYS_kexec_load, unknown).known);
}

TEST_CASE("names exist for syscalls outside the table")
{
    CHECK(syscall_name(SYS_kexec_load) == "kexec_load");
    CHECK(syscall_name(462) == "mseal");
    CHECK(syscall_name(9999) == "syscall_9999");
    CHECK(syscall_number("no_such_call") == -1);
}
