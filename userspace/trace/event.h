// The recording, as a stream of events. Every event carries `seq`, drawn from
// one counter shared by the kernel-side capture and the supervisor: it orders
// events globally; the stream's own order respects each thread's order and
// causality (a fork precedes its child's events).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rw {

using Tid = int32_t;

// General-purpose registers in the kernel's user_regs_struct order.
struct Registers {
    static constexpr size_t kCount = 27;
    std::array<uint64_t, kCount> words{};

    enum Index : size_t {
        R15,
        R14,
        R13,
        R12,
        RBP,
        RBX,
        R11,
        R10,
        R9,
        R8,
        RAX,
        RCX,
        RDX,
        RSI,
        RDI,
        ORIG_RAX,
        RIP,
        CS,
        EFLAGS,
        RSP,
        SS,
        FS_BASE,
        GS_BASE,
        DS,
        ES,
        FS,
        GS
    };
    uint64_t& operator[](Index i) { return words[i]; }
    uint64_t operator[](Index i) const { return words[i]; }
    bool operator==(const Registers&) const = default;
};

std::string_view register_name(size_t index);

// "SIGSEGV", "SIGRTMIN+3".
std::string signal_name(int signo);

enum class Direction : uint8_t { In = 1, Out = 2 };

// A piece of user memory a syscall read (In) or wrote (Out), as it was at
// syscall exit. Large inputs that replay only needs to check are kept as a
// hash; `bytes` is then empty.
struct MemoryRange {
    uint64_t addr = 0;
    uint8_t buffer = 0; // index into the syscall's buffer list
    Direction dir = Direction::Out;
    bool hashed_only = false;
    bool unreadable = false; // could not be read at capture time
    uint64_t length = 0;
    uint64_t hash = 0; // xxh3-64 of an input's bytes (0 for an output: its bytes are kept)
    std::vector<uint8_t> bytes;
    // An output read from a file the trace holds: the bytes are that copy's
    // (a content hash under files/) from file_offset on. A trace reader
    // fills `bytes` in from the copy (EventStreamReader::read_copies_from).
    std::string file_copy;
    uint64_t file_offset = 0;
    bool operator==(const MemoryRange&) const = default;
};

// The hash a MemoryRange keeps of an input's bytes (xxh3-64).
uint64_t hash_bytes(const void* data, size_t size);

// Identity of a mapped file and the trace's copy of its content.
struct FileRef {
    uint64_t dev = 0;
    uint64_t ino = 0;
    int64_t size = 0;
    int64_t mtime_ns = 0;
    std::string content_hash; // name under files/ in the trace; empty if not copied
    std::string path;
    bool operator==(const FileRef&) const = default;
};

enum SyscallFlags : uint32_t {
    kSyscallUnknown = 1u << 0,           // not in the table: effects unknown
    kSyscallUnknownSubcommand = 1u << 1, // ioctl/prctl/… request not in the table
    kSyscallRebuilt = 1u << 3,           // captured by the supervisor after a stall
    kSyscallChildReturn = 1u << 4,       // a new task's first return from fork/clone
    kSyscallInSync = 1u << 5,            // made inside a synchronization call (--parallel)
    // Wrote or resized `file`, which some process had mapped: its input
    // ranges went to the file at file_offset, and `file.size` is its size
    // after the call.
    kSyscallMappedWrite = 1u << 6,
    // An output's size depends on kernel state the recorder could not read
    // (a semaphore set removed meanwhile): what it wrote is missing.
    kSyscallUnsized = 1u << 7,
    // Wrote another process's memory through `file` (its /proc/PID/mem, the
    // path naming the recorded thread): its input ranges went there, from
    // address file_offset on.
    kSyscallWroteProcess = 1u << 8,
};

struct SyscallEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Tid tgid = 0;
    int32_t nr = 0;
    std::array<uint64_t, 6> args{};
    int64_t ret = 0;
    uint64_t ip = 0; // user ip after the syscall instruction
    uint64_t sp = 0;
    uint64_t exit_time = 0; // the thread's running time at exit + 1, in 1/TraceEnd::kernel_hz s (0: none)
    uint32_t flags = 0;
    std::vector<MemoryRange> memory;
    std::optional<FileRef> file; // mmap of a file; the file a kSyscallMappedWrite changed
    uint64_t file_offset = 0;    // kSyscallMappedWrite, kSyscallWroteProcess: where its data went in `file`
    bool operator==(const SyscallEvent&) const = default;
};

// Whether the call also wrote some of an input range's bytes (the same
// buffer as request and remainder of clock_nanosleep, as set and old set of
// rt_sigprocmask, an ioctl's in-out struct): inputs are captured when the
// call returns, so such a range holds what the kernel left there, not what
// the program passed.
bool written_by_call(const SyscallEvent& e, const MemoryRange& input);

struct ForkEvent {
    uint64_t seq = 0;
    Tid parent_tid = 0;
    Tid parent_tgid = 0;
    Tid child_tid = 0;
    Tid child_tgid = 0;
    uint64_t time_ns = 0;
    bool is_thread() const { return child_tgid == parent_tgid; }
    bool operator==(const ForkEvent&) const = default;
};

struct Mapping {
    uint64_t start = 0;
    uint64_t end = 0;
    std::string perms; // "r-xp"
    uint64_t offset = 0;
    std::string path;         // as /proc/PID/maps names it
    std::string content_hash; // trace copy of a file mapping, else empty
    bool operator==(const Mapping&) const = default;
};

// The program image right after a successful execve, before its first
// instruction (the supervisor's exec stop).
struct ExecEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Tid tgid = 0;
    Tid former_tid = 0;     // differs when a non-leader thread called execve
    std::string filename;   // the exec'd path (AT_EXECFN)
    std::string executable; // resolved path of the binary
    std::vector<std::string> argv;
    std::vector<std::string> envp;
    std::vector<uint64_t> auxv;          // key/value pairs as the program sees them
    std::array<uint8_t, 16> at_random{}; // the bytes AT_RANDOM points to
    Registers regs;
    std::vector<Mapping> mappings;
    bool operator==(const ExecEvent&) const = default;
};

struct ExitEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Tid tgid = 0;
    int32_t exit_code = 0;       // wait-status form, for this thread
    int32_t group_exit_code = 0; // wait-status form, for the process
    bool group_dead = false;     // last thread of its process
    int32_t pending_nr = -1;     // syscall the thread was in (exit_group…), or -1
    std::array<uint64_t, 6> pending_args{};
    uint64_t time_ns = 0;
    bool operator==(const ExitEvent&) const = default;
};

enum class SignalKind : uint8_t {
    Fault = 1,      // synchronous: caused by the instruction at regs.rip
    AtSyscall = 2,  // asynchronous, delivered at the exit of syscall `anchor_seq`
    AtPosition = 3, // asynchronous, delivered in user code at regs (fallback)
};

struct SignalEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Tid tgid = 0;
    int32_t signo = 0;
    SignalKind kind = SignalKind::Fault;
    uint64_t anchor_seq = 0; // the thread's last syscall event before delivery
    std::array<uint8_t, 128> siginfo{};
    Registers regs;
    // AtPosition: the pages the thread wrote from its interrupt to regs
    // (supervisor_signal_probe.cpp), and their content there.
    std::vector<uint64_t> pages;
    uint64_t pages_hash = 0;
    // Their sum as replay's breakpoint filter computes it (page_sum), for
    // at most RW_SUM_PAGES pages; 0: none (more pages, or an older trace).
    uint64_t pages_sum = 0;
    bool operator==(const SignalEvent&) const = default;
};

struct RdtscEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    uint64_t ip = 0;
    uint64_t tsc = 0;
    uint32_t aux = 0;
    bool rdtscp = false;
    bool operator==(const RdtscEvent&) const = default;
};

// rdrand or rdseed at `ip` (random_insn.h), and the number it gave.
struct RandomEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    uint64_t ip = 0;
    uint64_t value = 0;
    bool seed = false;
    bool operator==(const RandomEvent&) const = default;
};

// A thread switch the recorder's scheduler made in user code: while other
// threads of the process were ready, `tid` ran past its time slice without a
// syscall (a spin-wait, a long computation) and was stopped here. Replay runs
// the thread to the first execution of regs.rip with exactly these registers
// where the pages it was writing also hold the same bytes.
struct PreemptEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Registers regs;
    std::vector<uint64_t> pages; // pages the thread wrote in one round of its loop here
    uint64_t pages_hash = 0;     // their content at this point (page_digest)
    bool operator==(const PreemptEvent&) const = default;
};

// A thread of a process recorded with --parallel passed a synchronization
// point: the entry of a call that releases (unlock, post, signal…) or the
// return of one that acquires (lock, wait…). seq is the global order the
// kernel side gave it; replay runs threads one at a time in that order.
enum class SyncPhase : uint8_t { Release = 1, Acquire = 2 };

struct SyncEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    Tid tgid = 0;
    uint32_t fn = 0; // enum rw_sync_fn
    SyncPhase phase = SyncPhase::Release;
    uint64_t object = 0; // the call's first argument (the lock's address)
    uint64_t entry = 0;  // the function's address in the process
    int64_t ret = 0;     // the call's return value (Acquire)
    bool operator==(const SyncEvent&) const = default;
};

enum class NoteKind : uint8_t {
    Incomplete = 1, // from here on the recording may be wrong; readers say so
    Info = 2,
};

struct NoteEvent {
    uint64_t seq = 0;
    Tid tid = 0;
    NoteKind kind = NoteKind::Info;
    std::string message;
    bool operator==(const NoteEvent&) const = default;
};

using Event = std::variant<SyscallEvent, ForkEvent, ExecEvent, ExitEvent, SignalEvent, RdtscEvent, NoteEvent,
                           PreemptEvent, SyncEvent, RandomEvent>;

uint64_t event_seq(const Event& e);
// What an event holds in memory, near enough for the recorder's budgets.
size_t event_memory_size(const Event& e);
Tid event_tid(const Event& e);
std::string_view event_kind_name(const Event& e);

} // namespace rw
