// The recorder's thread scheduling bookkeeping and the event orderer that
// puts syscall events where their thread gave up the CPU.
#include <doctest/doctest.h>

#include <sys/syscall.h>

#include <vector>

#include "event_orderer.h"
#include "syscall_table.h"
#include "thread_scheduler.h"

using namespace rw;

namespace {

struct Collect : EventSink {
    std::vector<uint64_t> seqs;
    void emit(Event e) override { seqs.push_back(event_seq(e)); }
};

Event note(uint64_t seq)
{
    NoteEvent n;
    n.seq = seq;
    return n;
}

} // namespace

TEST_CASE("events pass straight through without open reservations")
{
    Collect out;
    EventOrderer o(out);
    o.emit(note(3));
    o.emit(note(1)); // arrival order is kept: only reservations reorder
    CHECK(out.seqs == std::vector<uint64_t>{3, 1});
}

TEST_CASE("a reserved place holds later events until it is filled")
{
    Collect out;
    EventOrderer o(out);
    o.emit(note(1));
    o.reserve(2);
    o.emit(note(4));
    o.emit(note(3));
    CHECK(out.seqs == std::vector<uint64_t>{1});
    CHECK(o.held() == 2);
    o.fill(note(2));
    CHECK(out.seqs == std::vector<uint64_t>{1, 2, 3, 4});
    CHECK(o.held() == 0);
}

TEST_CASE("cancelled and unfilled reservations release what waits behind them")
{
    Collect out;
    EventOrderer o(out);
    o.reserve(5);
    o.reserve(7);
    o.emit(note(6));
    o.emit(note(8));
    o.cancel(5);
    CHECK(out.seqs == std::vector<uint64_t>{6});
    CHECK(o.finish() == 1);
    CHECK(out.seqs == std::vector<uint64_t>{6, 8});
}

TEST_CASE("one thread of a process runs at a time, the longest waiting next")
{
    ThreadScheduler s(std::chrono::milliseconds(50), false);
    auto now = ThreadScheduler::Clock::now();
    CHECK(!s.serialized(100));
    s.serialize(100, 100, now);
    CHECK(s.running(100) == 100);
    CHECK(!s.want(100, 101, now));
    CHECK(!s.want(100, 102, now));
    CHECK(s.waiting(100) == 2);
    CHECK(s.yield(100, 100, now) == 101);
    CHECK(s.want(100, 100, now) == false);
    CHECK(s.gone(100, 101, now) == 102);
    CHECK(s.yield(100, 102, now) == 100);
    CHECK(s.yield(100, 100, now) == std::nullopt);
    CHECK(s.want(100, 102, now)); // nobody runs: it gets the CPU at once
}

TEST_CASE("a thread past its slice is overdue only while another waits")
{
    ThreadScheduler s(std::chrono::milliseconds(50), false);
    auto t0 = ThreadScheduler::Clock::now();
    s.serialize(7, 7, t0);
    CHECK(s.overdue(t0 + std::chrono::seconds(1)).empty());
    s.want(7, 8, t0);
    CHECK(s.overdue(t0 + std::chrono::milliseconds(10)).empty());
    CHECK(s.overdue(t0 + std::chrono::seconds(1)) == std::vector<Tid>{7});
}

TEST_CASE("syscalls that never block keep the CPU; those that may block give it up")
{
    uint64_t none[RW_MAX_ARGS] = {};
    CHECK(blocking(SYS_mmap, none) == Blocking::Never);
    CHECK(blocking(SYS_clone3, none) == Blocking::Never);
    CHECK(blocking(SYS_exit, none) == Blocking::Never);
    CHECK(blocking(SYS_read, none) == Blocking::OnDescriptor);
    CHECK(blocking(SYS_pwritev2, none) == Blocking::OnDescriptor);
    CHECK(blocking(SYS_sched_yield, none) == Blocking::May);
    CHECK(blocking(SYS_nanosleep, none) == Blocking::May);
    CHECK(blocking(1000, none) == Blocking::May); // unknown
    uint64_t wait[RW_MAX_ARGS] = {0, 0 /* FUTEX_WAIT */}, wake[RW_MAX_ARGS] = {0, 1 | 128 /* FUTEX_WAKE_PRIVATE */};
    CHECK(blocking(SYS_prctl, none) == Blocking::Never); // a subcommand inherits its syscall's answer
    CHECK(blocking(SYS_futex, wait) == Blocking::May);
    CHECK(blocking(SYS_futex, wake) == Blocking::Never);
}

TEST_CASE("the kernel side's blocking flags say what blocking() says")
{
    for (const auto& info : all_syscalls()) {
        rw_sys_spec k = kernel_spec(info);
        CAPTURE(info.name);
        CHECK(bool(k.flags & RW_SYS_MAY_BLOCK) == (info.blocking == Blocking::May));
        CHECK(bool(k.flags & RW_SYS_BLOCKS_ON_FD) == (info.blocking == Blocking::OnDescriptor));
        CHECK((k.flags & ~(RW_SYS_MAY_BLOCK | RW_SYS_BLOCKS_ON_FD)) == info.spec.flags);
    }
    for (const auto& sub : all_subcommands()) {
        uint64_t args[RW_MAX_ARGS] = {};
        const SyscallInfo* parent = find_syscall(sub.nr);
        REQUIRE(parent);
        args[parent->spec.dispatch_arg] = sub.value;
        rw_sys_spec k = kernel_spec(sub);
        CAPTURE(sub.name);
        CHECK(bool(k.flags & RW_SYS_MAY_BLOCK) == (blocking(sub.nr, args) == Blocking::May));
    }
}
