// Buffers the syscall table finds through structs in user memory (a
// pointer field, a size field, an array after a header), through kernel
// state (a BPF map's sizes, a semaphore set's), and only for some values of
// an argument or a field: walked as the kernel side and the supervisor walk
// them.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "kernel_state.h"
#include "fake_memory.h"
#include "syscall_memory.h"
#include "syscall_table.h"

using namespace rw;

namespace {

using test::FakeMemory;

WalkResult walk(int nr, std::initializer_list<uint64_t> a, int64_t ret, const FakeMemory& mem,
                const StateReader& state = {})
{
    uint64_t args[RW_MAX_ARGS] = {};
    size_t i = 0;
    for (uint64_t v : a)
        args[i++] = v;
    return walk_buffers(resolve_spec(nr, args).spec, args, ret, mem.reader(), state);
}

// The segments as (address, length, direction 'i' or 'o').
std::vector<std::tuple<uint64_t, uint64_t, char>> pieces(const WalkResult& r)
{
    std::vector<std::tuple<uint64_t, uint64_t, char>> out;
    for (const auto& s : r.segments)
        out.emplace_back(s.addr, s.len, s.dir == Direction::Out ? 'o' : 'i');
    return out;
}

using Pieces = std::vector<std::tuple<uint64_t, uint64_t, char>>;

// A BPF map of 4-byte keys and 8-byte values at descriptor 3.
std::optional<uint64_t> map_sizes(uint32_t state, uint64_t key)
{
    if (key != 3)
        return std::nullopt;
    return state == RW_STATE_BPF_KEY ? 4 : state == RW_STATE_BPF_VALUE ? 8 : std::optional<uint64_t>{};
}

} // namespace

TEST_CASE("bpf: a map's key and value are sized by the map its descriptor names")
{
    FakeMemory mem;
    union bpf_attr attr {};
    attr.map_fd = 3;
    attr.key = 0x5000;
    attr.value = 0x6000;
    mem.put(0x1000, &attr, sizeof attr);
    auto r = walk(SYS_bpf, {BPF_MAP_LOOKUP_ELEM, 0x1000, sizeof attr}, 0, mem, map_sizes);
    REQUIRE(r.status == WalkResult::Status::Ok);
    CHECK(pieces(r) == Pieces{{0x1000, sizeof attr, 'i'}, {0x5000, 4, 'i'}, {0x6000, 8, 'o'}});
    // The lookup failed (no such key): the value was not written.
    CHECK(pieces(walk(SYS_bpf, {BPF_MAP_LOOKUP_ELEM, 0x1000, sizeof attr}, -2, mem, map_sizes)) ==
          Pieces{{0x1000, sizeof attr, 'i'}, {0x5000, 4, 'i'}});
    // The next key is a key; the first key has no key to start from.
    attr.key = 0;
    mem.put(0x1000, &attr, sizeof attr);
    CHECK(pieces(walk(SYS_bpf, {BPF_MAP_GET_NEXT_KEY, 0x1000, sizeof attr}, 0, mem, map_sizes)) ==
          Pieces{{0x1000, sizeof attr, 'i'}, {0x6000, 4, 'o'}});
    // A descriptor that names no map the walker can see: it says so
    // rather than guess a size.
    attr.map_fd = 9;
    attr.key = 0x5000;
    mem.put(0x1000, &attr, sizeof attr);
    CHECK(walk(SYS_bpf, {BPF_MAP_LOOKUP_ELEM, 0x1000, sizeof attr}, 0, mem, map_sizes).status ==
          WalkResult::Status::Unsized);
    CHECK(walk(SYS_bpf, {BPF_MAP_LOOKUP_ELEM, 0x1000, sizeof attr}, 0, mem).status == WalkResult::Status::Unsized);
}

TEST_CASE("bpf: fields past the size the program gave are not read")
{
    FakeMemory mem;
    union bpf_attr attr {};
    attr.insn_cnt = 2;
    attr.insns = 0x7000;
    attr.license = 0x7100;
    attr.log_level = 1;
    attr.log_size = 256;
    attr.log_buf = 0x8000;
    mem.put(0x1000, &attr, sizeof attr);
    auto full = walk(SYS_bpf, {BPF_PROG_LOAD, 0x1000, sizeof attr}, 5, mem);
    REQUIRE(full.status == WalkResult::Status::Ok);
    std::map<uint64_t, std::pair<uint64_t, char>> got;
    for (const auto& [addr, len, dir] : pieces(full))
        got[addr] = {len, dir};
    CHECK(got[0x7000] == std::pair<uint64_t, char>{16, 'i'});      // two instructions
    CHECK(got.count(0x7100));                                      // the license, a string
    CHECK(got[0x8000] == std::pair<uint64_t, char>{256, 'o'});     // the verifier's log
    CHECK(got[0x1000 + 140] == std::pair<uint64_t, char>{4, 'o'}); // log_true_size
    // A program that passes only the first 48 bytes: the log is still in
    // them, log_true_size is not.
    auto short_attr = walk(SYS_bpf, {BPF_PROG_LOAD, 0x1000, 48}, 5, mem);
    got.clear();
    for (const auto& [addr, len, dir] : pieces(short_attr))
        got[addr] = {len, dir};
    CHECK(got.count(0x8000));
    CHECK_FALSE(got.count(0x1000 + 140));
    // The verifier refused it: its log is written all the same.
    auto refused = walk(SYS_bpf, {BPF_PROG_LOAD, 0x1000, sizeof attr}, -13, mem);
    got.clear();
    for (const auto& [addr, len, dir] : pieces(refused))
        got[addr] = {len, dir};
    CHECK(got[0x8000] == std::pair<uint64_t, char>{256, 'o'});
}

TEST_CASE("semctl: GETALL's array is as long as the set, which the call does not carry")
{
    FakeMemory mem;
    auto nsems = [](uint32_t state, uint64_t key) -> std::optional<uint64_t> {
        if (state == RW_STATE_SEM_NSEMS && key == 7)
            return 3 * 2;
        return std::nullopt;
    };
    CHECK(pieces(walk(SYS_semctl, {7, 0, GETALL, 0x4000}, 0, mem, nsems)) == Pieces{{0x4000, 6, 'o'}});
    CHECK(pieces(walk(SYS_semctl, {7, 0, SETALL, 0x4000}, 0, mem, nsems)) == Pieces{{0x4000, 6, 'i'}});
    CHECK(walk(SYS_semctl, {8, 0, GETALL, 0x4000}, 0, mem, nsems).status == WalkResult::Status::Unsized);
    CHECK(pieces(walk(SYS_semctl, {7, 0, IPC_STAT, 0x4000}, 0, mem)) == Pieces{{0x4000, 104, 'o'}});
}

TEST_CASE("msgsnd and msgrcv: a message's type, then its text, as long as given or received")
{
    FakeMemory mem;
    CHECK(pieces(walk(SYS_msgsnd, {5, 0x4000, 6, 0}, 0, mem)) == Pieces{{0x4000, 8, 'i'}, {0x4008, 6, 'i'}});
    // The buffer holds 32 bytes; the kernel wrote the type and the 7 it returned.
    CHECK(pieces(walk(SYS_msgrcv, {5, 0x4000, 32, 2, 0}, 7, mem)) == Pieces{{0x4000, 8, 'o'}, {0x4008, 7, 'o'}});
    // An empty message still has its type.
    CHECK(pieces(walk(SYS_msgrcv, {5, 0x4000, 32, 0, 0}, 0, mem)) == Pieces{{0x4000, 8, 'o'}});
    CHECK(walk(SYS_msgrcv, {5, 0x4000, 32, 0, 0}, -ENOMSG, mem).segments.empty());
}

TEST_CASE("mq_open reads its attributes only with O_CREAT; mq_notify a thread's cookie only for SIGEV_THREAD")
{
    FakeMemory mem;
    CHECK(pieces(walk(SYS_mq_open, {0x1000, O_RDWR | O_CREAT, 0600, 0x2000}, 3, mem)) ==
          Pieces{{0x1000, RW_MAX_STRING, 'i'}, {0x2000, 64, 'i'}});
    CHECK(pieces(walk(SYS_mq_open, {0x1000, O_RDWR, 0600, 0x2000}, 3, mem)) == Pieces{{0x1000, RW_MAX_STRING, 'i'}});

    struct sigevent thread {};
    thread.sigev_notify = SIGEV_THREAD;
    thread.sigev_value.sival_ptr = reinterpret_cast<void*>(0x6000);
    mem.put(0x5000, &thread, sizeof thread);
    CHECK(pieces(walk(SYS_mq_notify, {3, 0x5000}, 0, mem)) == Pieces{{0x5000, 64, 'i'}, {0x6000, 32, 'i'}});
    struct sigevent signal {};
    signal.sigev_notify = SIGEV_SIGNAL;
    signal.sigev_value.sival_ptr = reinterpret_cast<void*>(0x6000);
    mem.put(0x5000, &signal, sizeof signal);
    CHECK(pieces(walk(SYS_mq_notify, {3, 0x5000}, 0, mem)) == Pieces{{0x5000, 64, 'i'}});
    // Unregistering passes no sigevent.
    CHECK(walk(SYS_mq_notify, {3, 0}, 0, mem).segments.empty());
}

TEST_CASE("procfs gives the sizes the kernel side could not read")
{
    auto map = parse_bpf_map_fdinfo("pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t1057\nmap_type:\t6\n"
                                    "key_size:\t4\nvalue_size:\t12\nmax_entries:\t2\n");
    REQUIRE(map);
    CHECK(map->type == 6);
    CHECK(map->key_size == 4);
    // A per-CPU array: the value rounded up to 8 bytes, for every CPU.
    CHECK(bpf_map_value_bytes(*map, 3) == 48);
    map->type = 1; // a hash
    CHECK(bpf_map_value_bytes(*map, 3) == 12);
    map->type = 3; // an array of programs: their ids
    CHECK(bpf_map_value_bytes(*map, 3) == 4);
    CHECK_FALSE(parse_bpf_map_fdinfo("pos:\t0\nflags:\t02\n"));

    const char* table = "       key      semid perms      nsems   uid   gid  cuid  cgid      otime      ctime\n"
                        "         0          5   600          3     0     0     0     0          0 1700000000\n"
                        "1234567890         12   666         10     0     0     0     0          0 1700000001\n";
    CHECK(parse_sysvipc_nsems(table, 5) == 3u);
    CHECK(parse_sysvipc_nsems(table, 12) == 10u);
    CHECK_FALSE(parse_sysvipc_nsems(table, 6));
}
