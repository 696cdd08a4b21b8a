// The recorder's thread scheduling bookkeeping and the event orderer that
// puts syscall events where their thread gave up the CPU.
#include <doctest/doctest.h>

#include <sys/syscall.h>

#include <filesystem>
#include <unistd.h>
#include <vector>

#include "event_orderer.h"
#include "seq_window.h"
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

Event read_of(uint64_t seq, size_t bytes)
{
    SyscallEvent e;
    e.seq = seq;
    e.nr = SYS_read;
    MemoryRange m;
    m.dir = Direction::Out;
    m.bytes.assign(bytes, 0);
    m.length = bytes;
    e.memory.push_back(std::move(m));
    return e;
}

} // namespace

TEST_CASE("the recorder's seq window puts an event thousands of events late in its place")
{
    // A thread preempted between taking its seq and writing its record.
    Collect out;
    {
        SeqWindow w(out);
        for (uint64_t seq = 1; seq <= 5000; seq++)
            w.emit(read_of(seq, 4096));
        w.emit(read_of(0, 4096));
        CHECK(w.late() == 0);
        w.finish();
    }
    REQUIRE(out.seqs.size() == 5001);
    for (size_t i = 0; i < out.seqs.size(); i++)
        CHECK(out.seqs[i] == i);
}

TEST_CASE("the recorder's seq window writes events in order at once, and holds only those behind a gap")
{
    Collect out;
    SeqWindow w(out);
    for (uint64_t seq = 0; seq < 3; seq++)
        w.emit(read_of(seq, 4096));
    CHECK(out.seqs == std::vector<uint64_t>{0, 1, 2});
    CHECK(w.held() == 0);
    w.emit(read_of(4, 16));
    w.emit(read_of(5, 16));
    CHECK(w.held() == 2); // 3 is on its way
    w.emit(read_of(3, 16));
    CHECK(out.seqs == std::vector<uint64_t>{0, 1, 2, 3, 4, 5});
    CHECK(w.held() == 0);
    CHECK(w.late() == 0);
}

TEST_CASE("the recorder's seq window gives a gap up past its memory or count bound, and counts what comes too late")
{
    Collect out;
    SeqWindow w(out, 4, 100, 64 * 1024);
    // 16 KiB records behind the missing seq 0: the byte budget gives the
    // gap up at the fifth, and the rest follow at once.
    for (uint64_t seq = 1; seq <= 4; seq++)
        w.emit(read_of(seq, 16 * 1024));
    CHECK(out.seqs.empty());
    w.emit(read_of(5, 16 * 1024));
    CHECK(out.seqs == std::vector<uint64_t>{1, 2, 3, 4, 5});
    w.emit(read_of(6, 16 * 1024));
    CHECK(out.seqs.size() == 6);
    w.emit(read_of(0, 16)); // behind what was written
    CHECK(w.late() == 1);
    CHECK(out.seqs.size() == 7);
    // Small records behind the missing seq 7: the count bound.
    for (uint64_t seq = 8; seq <= 107; seq++)
        w.emit(read_of(seq, 16));
    CHECK(w.held() == 100);
    w.emit(read_of(108, 16));
    CHECK(w.held() == 0);
    CHECK(out.seqs.size() == 7 + 101);
    // A syscall rebuilt after a stall comes late by design.
    Event rebuilt = read_of(7, 16);
    std::get<SyscallEvent>(rebuilt).flags |= kSyscallRebuilt;
    w.emit(std::move(rebuilt));
    CHECK(w.late() == 1);
    w.emit(read_of(110, 16));
    CHECK(w.held() == 1);
    w.finish();
    CHECK(w.held() == 0);
    CHECK(out.seqs.back() == 110);
    CHECK(w.late() == 1);
}

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

TEST_CASE("held events past the budget wait on disk and come back whole, in order")
{
    struct Keep : EventSink {
        std::vector<Event> events;
        void emit(Event e) override { events.push_back(std::move(e)); }
    } out;
    auto dir = std::filesystem::temp_directory_path() / ("rewind-spill-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        EventOrderer o(out);
        o.spill_to(dir, 64 * 1024);
        o.reserve(1);
        std::vector<Event> sent;
        for (uint64_t seq = 2; seq <= 200; seq++) {
            Event e = read_of(seq, 16384); // 3 MB in all: the file is written, not only its buffer
            auto& m = std::get<SyscallEvent>(e).memory[0];
            for (size_t i = 0; i < m.bytes.size(); i++)
                m.bytes[i] = static_cast<uint8_t>(seq * 31 + i);
            sent.push_back(e);
            o.emit(std::move(e));
        }
        CHECK(out.events.empty());
        CHECK(o.held() == 199);
        CHECK(o.held_bytes() <= 64 * 1024);
        CHECK(o.spilled_bytes() > 150 * 16384);
        Event first = read_of(1, 16);
        sent.insert(sent.begin(), first);
        o.fill(std::move(first));
        CHECK(o.held() == 0);
        CHECK(o.held_bytes() == 0);
        REQUIRE(out.events.size() == sent.size());
        for (size_t i = 0; i < sent.size(); i++)
            CHECK(out.events[i] == sent[i]);
        // The file is emptied and used again.
        o.reserve(300);
        for (uint64_t seq = 301; seq <= 400; seq++)
            o.emit(read_of(seq, 4096));
        o.fill(read_of(300, 16));
        CHECK(out.events.size() == sent.size() + 101);
        CHECK(event_seq(out.events.back()) == 400);
    }
    // Unlinked from the start: nothing is left in the directory.
    CHECK(std::filesystem::is_empty(dir));
    std::filesystem::remove_all(dir);
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

TEST_CASE("a thread out of sched_yield runs after the threads on their way back from theirs")
{
    // Ping-pong on sched_yield: pong entered its sched_yield and handed the
    // CPU to ping, which entered its own before pong's return was seen.
    // Ping asks first, and yet pong runs: the kernel runs other runnable
    // threads before one that yields.
    ThreadScheduler s(std::chrono::milliseconds(50), false);
    auto now = ThreadScheduler::Clock::now();
    s.serialize(100, 101, now);                          // pong runs
    CHECK(!s.want(100, 100, now));                       // ping waits
    CHECK(s.yield(100, 101, now, true) == 100);          // pong steps aside
    CHECK(s.yield(100, 100, now, true) == std::nullopt); // so does ping
    CHECK(!s.want(100, 100, now));                       // ping must not run again first
    CHECK(s.want(100, 101, now));                        // pong does
    CHECK(s.yield(100, 101, now, true) == 100);
    // One that stepped aside after it holds nobody off.
    CHECK(s.yield(100, 100, now, true) == std::nullopt);
    CHECK(s.want(100, 101, now));
    CHECK(!s.want(100, 100, now));
    CHECK(s.yield(100, 101, now, true) == 100);

    // A thread that stepped aside and does not come back holds nobody off
    // for longer than a slice...
    CHECK(s.yield(100, 100, now, true) == std::nullopt);
    CHECK(!s.want(100, 100, now));
    CHECK(s.overdue_turns(now).empty());
    auto later = now + std::chrono::milliseconds(60);
    CHECK(s.overdue_turns(later) == std::vector<std::pair<Tid, Tid>>{{100, 100}});
    CHECK(s.running(100) == 100);

    // ...nor once it has ended.
    CHECK(s.yield(100, 100, later, true) == std::nullopt);
    CHECK(s.want(100, 101, later)); // it never stepped aside
    CHECK(s.yield(100, 101, later, true) == std::nullopt);
    CHECK(!s.want(100, 101, later));       // 100 is on its way back
    CHECK(s.gone(100, 100, later) == 101); // it is not: 101 goes on
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
