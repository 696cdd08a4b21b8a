#include "event_codec.h"

#include <type_traits>

#include "file_store.h"

namespace rw {
namespace {

enum Tag : uint8_t {
    kSyscall = 1,
    kFork = 2,
    kExec = 3,
    kExit = 4,
    kSignal = 5,
    kRdtsc = 6,
    kNote = 7,
    kPreempt = 8,
    kSync = 9,
    kRandom = 10
};

enum RangeBits : uint8_t { kDirOut = 1, kHashedOnly = 2, kUnreadable = 4, kFromFile = 8 };

constexpr int64_t kMaxSignal = 64;        // Linux's _NSIG: replay shifts masks by signo - 1
constexpr uint8_t kSignalHasPages = 0x80; // in a signal event's kind byte
constexpr uint8_t kSignalHasSum = 0x40;   // likewise: the pages' sum follows them
constexpr uint64_t kMaxPages = uint64_t(1) << 24;

void put_regs(ByteWriter& w, const Registers& r)
{
    for (uint64_t v : r.words)
        w.varint(v);
}

Registers get_regs(ByteReader& r)
{
    Registers regs;
    for (auto& v : regs.words)
        v = r.varint();
    return regs;
}

void put_pages(ByteWriter& w, const std::vector<uint64_t>& pages, uint64_t hash)
{
    w.varint(pages.size());
    for (uint64_t p : pages)
        w.varint(p);
    w.varint(hash);
}

void get_pages(ByteReader& r, std::vector<uint64_t>& pages, uint64_t& hash, const char* what)
{
    uint64_t n = r.varint();
    if (n > kMaxPages)
        throw FormatError(std::string(what) + " with " + std::to_string(n) + " pages");
    pages.reserve(n);
    for (uint64_t i = 0; i < n; i++)
        pages.push_back(r.varint());
    hash = r.varint();
}

template <size_t N> void put_array(ByteWriter& w, const std::array<uint64_t, N>& a)
{
    for (uint64_t v : a)
        w.varint(v);
}

template <size_t N> std::array<uint64_t, N> get_array(ByteReader& r)
{
    std::array<uint64_t, N> a{};
    for (auto& v : a)
        v = r.varint();
    return a;
}

void put_strings(ByteWriter& w, const std::vector<std::string>& v)
{
    w.varint(v.size());
    for (const auto& s : v)
        w.str(s);
}

std::vector<std::string> get_strings(ByteReader& r)
{
    size_t n = r.length(); // each string takes at least one byte
    std::vector<std::string> v;
    v.reserve(n);
    for (size_t i = 0; i < n; i++)
        v.push_back(r.str());
    return v;
}

void put_file(ByteWriter& w, const FileRef& f)
{
    w.varint(f.dev);
    w.varint(f.ino);
    w.svarint(f.size);
    w.svarint(f.mtime_ns);
    w.str(f.content_hash);
    w.str(f.path);
}

FileRef get_file(ByteReader& r)
{
    FileRef f;
    f.dev = r.varint();
    f.ino = r.varint();
    f.size = r.svarint();
    f.mtime_ns = r.svarint();
    f.content_hash = r.str();
    f.path = r.str();
    return f;
}

void encode(ByteWriter& w, const SyscallEvent& e)
{
    w.u8(kSyscall);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.svarint(e.tgid);
    w.svarint(e.nr);
    put_array(w, e.args);
    w.svarint(e.ret);
    w.varint(e.ip);
    w.varint(e.sp);
    w.varint(e.exit_time);
    w.varint(e.flags);
    w.varint(e.memory.size());
    for (const auto& m : e.memory) {
        w.varint(m.addr);
        w.u8(m.buffer);
        bool from_file = !m.file_copy.empty();
        w.u8(static_cast<uint8_t>((m.dir == Direction::Out ? kDirOut : 0) | (m.hashed_only ? kHashedOnly : 0) |
                                  (m.unreadable ? kUnreadable : 0) | (from_file ? kFromFile : 0)));
        w.varint(m.length);
        w.fixed64(m.hash);
        if (from_file) {
            w.str(m.file_copy);
            w.varint(m.file_offset);
        } else if (!m.hashed_only && !m.unreadable) {
            w.raw(m.bytes);
        }
    }
    w.u8(e.file ? 1 : 0);
    if (e.file)
        put_file(w, *e.file);
    if (e.flags & (kSyscallMappedWrite | kSyscallWroteProcess))
        w.varint(e.file_offset);
}

// Into `e`, whatever it held: its vectors keep their storage, so a reader
// going through a long trace allocates nothing per event.
void decode_syscall(ByteReader& r, SyscallEvent& e)
{
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.tgid = static_cast<Tid>(r.svarint());
    e.nr = static_cast<int32_t>(r.svarint());
    e.args = get_array<6>(r);
    e.ret = r.svarint();
    e.ip = r.varint();
    e.sp = r.varint();
    e.exit_time = r.varint();
    e.flags = static_cast<uint32_t>(r.varint());
    size_t n = r.length();
    e.memory.resize(n);
    for (MemoryRange& m : e.memory) {
        m.addr = r.varint();
        m.buffer = r.u8();
        uint8_t bits = r.u8();
        if (bits & ~(kDirOut | kHashedOnly | kUnreadable | kFromFile))
            throw FormatError("unknown memory range bits " + std::to_string(bits));
        if ((bits & kFromFile) && bits != (kFromFile | kDirOut))
            throw FormatError("a memory range read from a file that is not a plain output");
        // Only inputs are kept as a hash: replay restores outputs byte for
        // byte, and would otherwise size its comparison by the bare length.
        if ((bits & kDirOut) && (bits & kHashedOnly))
            throw FormatError("an output memory range kept as a hash only");
        m.dir = (bits & kDirOut) ? Direction::Out : Direction::In;
        m.hashed_only = bits & kHashedOnly;
        m.unreadable = bits & kUnreadable;
        m.length = r.varint();
        m.hash = r.fixed64();
        m.bytes.clear();
        m.file_copy.clear();
        m.file_offset = 0;
        if (bits & kFromFile) {
            m.file_copy = r.str();
            m.file_offset = r.varint();
            if (!is_content_hash(m.file_copy))
                throw FormatError("a memory range names a file copy by a name of " +
                                  std::to_string(m.file_copy.size()) + " bytes that is not a content hash");
        } else if (!m.hashed_only && !m.unreadable) {
            auto bytes = r.raw(static_cast<size_t>(m.length));
            m.bytes.assign(bytes.begin(), bytes.end());
        }
    }
    if (r.u8())
        e.file = get_file(r);
    else
        e.file.reset();
    e.file_offset = 0;
    if (e.flags & (kSyscallMappedWrite | kSyscallWroteProcess)) {
        if (!e.file)
            throw FormatError("a write to a mapped file or to a process's memory that names no file");
        e.file_offset = r.varint();
    }
}

void encode(ByteWriter& w, const ForkEvent& e)
{
    w.u8(kFork);
    w.varint(e.seq);
    w.svarint(e.parent_tid);
    w.svarint(e.parent_tgid);
    w.svarint(e.child_tid);
    w.svarint(e.child_tgid);
    w.varint(e.time_ns);
}

ForkEvent decode_fork(ByteReader& r)
{
    ForkEvent e;
    e.seq = r.varint();
    e.parent_tid = static_cast<Tid>(r.svarint());
    e.parent_tgid = static_cast<Tid>(r.svarint());
    e.child_tid = static_cast<Tid>(r.svarint());
    e.child_tgid = static_cast<Tid>(r.svarint());
    e.time_ns = r.varint();
    return e;
}

void encode(ByteWriter& w, const ExecEvent& e)
{
    w.u8(kExec);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.svarint(e.tgid);
    w.svarint(e.former_tid);
    w.str(e.filename);
    w.str(e.executable);
    put_strings(w, e.argv);
    put_strings(w, e.envp);
    w.varint(e.auxv.size());
    for (uint64_t v : e.auxv)
        w.varint(v);
    w.raw(e.at_random);
    put_regs(w, e.regs);
    w.varint(e.mappings.size());
    for (const auto& m : e.mappings) {
        w.varint(m.start);
        w.varint(m.end);
        w.str(m.perms);
        w.varint(m.offset);
        w.str(m.path);
        w.str(m.content_hash);
    }
}

ExecEvent decode_exec(ByteReader& r)
{
    ExecEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.tgid = static_cast<Tid>(r.svarint());
    e.former_tid = static_cast<Tid>(r.svarint());
    e.filename = r.str();
    e.executable = r.str();
    e.argv = get_strings(r);
    e.envp = get_strings(r);
    size_t n = r.length();
    e.auxv.reserve(n);
    for (size_t i = 0; i < n; i++)
        e.auxv.push_back(r.varint());
    auto random = r.raw(16);
    std::copy(random.begin(), random.end(), e.at_random.begin());
    e.regs = get_regs(r);
    n = r.length();
    for (size_t i = 0; i < n; i++) {
        Mapping m;
        m.start = r.varint();
        m.end = r.varint();
        m.perms = r.str();
        m.offset = r.varint();
        m.path = r.str();
        m.content_hash = r.str();
        e.mappings.push_back(std::move(m));
    }
    return e;
}

void encode(ByteWriter& w, const ExitEvent& e)
{
    w.u8(kExit);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.svarint(e.tgid);
    w.svarint(e.exit_code);
    w.svarint(e.group_exit_code);
    w.u8(e.group_dead);
    w.svarint(e.pending_nr);
    put_array(w, e.pending_args);
    w.varint(e.time_ns);
}

ExitEvent decode_exit(ByteReader& r)
{
    ExitEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.tgid = static_cast<Tid>(r.svarint());
    e.exit_code = static_cast<int32_t>(r.svarint());
    e.group_exit_code = static_cast<int32_t>(r.svarint());
    e.group_dead = r.u8() != 0;
    e.pending_nr = static_cast<int32_t>(r.svarint());
    e.pending_args = get_array<6>(r);
    e.time_ns = r.varint();
    return e;
}

void encode(ByteWriter& w, const SignalEvent& e)
{
    w.u8(kSignal);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.svarint(e.tgid);
    w.svarint(e.signo);
    // Traces from before positions had pages (or their sum) read the same.
    bool has_sum = !e.pages.empty() && e.pages_sum != 0;
    w.u8(static_cast<uint8_t>(e.kind) | (e.pages.empty() ? 0 : kSignalHasPages) | (has_sum ? kSignalHasSum : 0));
    w.varint(e.anchor_seq);
    w.raw(e.siginfo);
    put_regs(w, e.regs);
    if (!e.pages.empty())
        put_pages(w, e.pages, e.pages_hash);
    if (has_sum)
        w.varint(e.pages_sum);
}

SignalEvent decode_signal(ByteReader& r)
{
    SignalEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.tgid = static_cast<Tid>(r.svarint());
    int64_t signo = r.svarint();
    if (signo < 1 || signo > kMaxSignal)
        throw FormatError("signal number " + std::to_string(signo));
    e.signo = static_cast<int32_t>(signo);
    uint8_t byte = r.u8();
    uint8_t kind = byte & ~(kSignalHasPages | kSignalHasSum);
    if (kind < 1 || kind > 3)
        throw FormatError("unknown signal kind " + std::to_string(kind));
    e.kind = static_cast<SignalKind>(kind);
    e.anchor_seq = r.varint();
    auto info = r.raw(128);
    std::copy(info.begin(), info.end(), e.siginfo.begin());
    e.regs = get_regs(r);
    if (byte & kSignalHasPages)
        get_pages(r, e.pages, e.pages_hash, "a signal event");
    if (byte & kSignalHasSum)
        e.pages_sum = r.varint();
    return e;
}

void encode(ByteWriter& w, const RdtscEvent& e)
{
    w.u8(kRdtsc);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.varint(e.ip);
    w.varint(e.tsc);
    w.varint(e.aux);
    w.u8(e.rdtscp);
}

RdtscEvent decode_rdtsc(ByteReader& r)
{
    RdtscEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.ip = r.varint();
    e.tsc = r.varint();
    e.aux = static_cast<uint32_t>(r.varint());
    e.rdtscp = r.u8() != 0;
    return e;
}

void encode(ByteWriter& w, const NoteEvent& e)
{
    w.u8(kNote);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.u8(static_cast<uint8_t>(e.kind));
    w.str(e.message);
}

NoteEvent decode_note(ByteReader& r)
{
    NoteEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    uint8_t kind = r.u8();
    if (kind < 1 || kind > 2)
        throw FormatError("unknown note kind " + std::to_string(kind));
    e.kind = static_cast<NoteKind>(kind);
    e.message = r.str();
    return e;
}

void encode(ByteWriter& w, const PreemptEvent& e)
{
    w.u8(kPreempt);
    w.varint(e.seq);
    w.svarint(e.tid);
    put_regs(w, e.regs);
    put_pages(w, e.pages, e.pages_hash);
}

PreemptEvent decode_preempt(ByteReader& r)
{
    PreemptEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.regs = get_regs(r);
    get_pages(r, e.pages, e.pages_hash, "a preemption event");
    return e;
}

void encode(ByteWriter& w, const SyncEvent& e)
{
    w.u8(kSync);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.svarint(e.tgid);
    w.varint(e.fn);
    w.u8(static_cast<uint8_t>(e.phase));
    w.varint(e.object);
    w.varint(e.entry);
    w.svarint(e.ret);
}

SyncEvent decode_sync(ByteReader& r)
{
    SyncEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.tgid = static_cast<Tid>(r.svarint());
    e.fn = static_cast<uint32_t>(r.varint());
    uint8_t phase = r.u8();
    if (phase != static_cast<uint8_t>(SyncPhase::Release) && phase != static_cast<uint8_t>(SyncPhase::Acquire))
        throw FormatError("unknown synchronization phase " + std::to_string(phase));
    e.phase = static_cast<SyncPhase>(phase);
    e.object = r.varint();
    e.entry = r.varint();
    e.ret = r.svarint();
    return e;
}

void encode(ByteWriter& w, const RandomEvent& e)
{
    w.u8(kRandom);
    w.varint(e.seq);
    w.svarint(e.tid);
    w.varint(e.ip);
    w.varint(e.value);
    w.u8(e.seed);
}

RandomEvent decode_random(ByteReader& r)
{
    RandomEvent e;
    e.seq = r.varint();
    e.tid = static_cast<Tid>(r.svarint());
    e.ip = r.varint();
    e.value = r.varint();
    e.seed = r.u8() != 0;
    return e;
}

} // namespace

void encode_event(const Event& event, std::vector<uint8_t>& out)
{
    ByteWriter w(out);
    std::visit([&](const auto& e) { encode(w, e); }, event);
}

Event decode_event(ByteReader& in)
{
    Event out;
    decode_event(in, out);
    return out;
}

void decode_event(ByteReader& in, Event& out)
{
    uint8_t tag = in.u8();
    switch (tag) {
    case kSyscall:
        if (!std::holds_alternative<SyscallEvent>(out))
            out.emplace<SyscallEvent>();
        decode_syscall(in, std::get<SyscallEvent>(out));
        return;
    case kFork:
        out = decode_fork(in);
        return;
    case kExec:
        out = decode_exec(in);
        return;
    case kExit:
        out = decode_exit(in);
        return;
    case kSignal:
        out = decode_signal(in);
        return;
    case kRdtsc:
        out = decode_rdtsc(in);
        return;
    case kNote:
        out = decode_note(in);
        return;
    case kPreempt:
        out = decode_preempt(in);
        return;
    case kSync:
        out = decode_sync(in);
        return;
    case kRandom:
        out = decode_random(in);
        return;
    }
    throw FormatError("unknown event tag " + std::to_string(tag));
}

} // namespace rw
