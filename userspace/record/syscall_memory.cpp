#include "syscall_memory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "kernel_state.h"
#include "process_image.h"
#include "syscall_table.h"
#include "tracee.h"

// The walker reads through C callbacks; these adapt a UserReader and a
// StateReader to them.
struct rw_walk;
static int rw_walk_read(struct rw_walk* w, void* dst, size_t size, uint64_t addr);
static int rw_walk_state(struct rw_walk* w, uint32_t state, uint64_t key, __u64* len);

#define RW_WALK_MAX_SEGMENTS (1u << 16)
#define RW_WALK_MAX_IOV 1024
#define RW_READ_USER(w, dst, size, src) rw_walk_read((w), (dst), (size), (src))
#define RW_STATE_SIZE(w, state, key, len) rw_walk_state((w), (state), (key), (len))
#include "buffer_walk.h"

namespace {
struct Readers {
    const rw::UserReader* memory;
    const rw::StateReader* state;
};
} // namespace

static int rw_walk_read(struct rw_walk* w, void* dst, size_t size, uint64_t addr)
{
    const auto* readers = static_cast<const Readers*>(w->reader);
    return (*readers->memory)(addr, dst, size) ? 0 : -1;
}

static int rw_walk_state(struct rw_walk* w, uint32_t state, uint64_t key, __u64* len)
{
    const auto* readers = static_cast<const Readers*>(w->reader);
    if (!*readers->state)
        return -1;
    auto size = (*readers->state)(state, key);
    if (!size)
        return -1;
    *len = *size;
    return 0;
}

namespace rw {

WalkResult walk_buffers(const rw_sys_spec& spec, const uint64_t (&args)[RW_MAX_ARGS], int64_t ret,
                        const UserReader& read, const StateReader& state)
{
    WalkResult result;
    std::vector<rw_segment> segs(RW_WALK_MAX_SEGMENTS);
    Readers readers{&read, &state};
    struct rw_walk w {};
    w.args = reinterpret_cast<const __u64*>(args);
    w.ret = ret;
    w.reader = &readers;
    w.segs = segs.data();
    rw_walk_syscall(&w, spec.bufs, spec.nbufs);
    switch (w.status) {
    case RW_WALK_OK:
        result.status = WalkResult::Status::Ok;
        break;
    case RW_WALK_TOO_COMPLEX:
        result.status = WalkResult::Status::TooComplex;
        break;
    case RW_WALK_UNSIZED:
        result.status = WalkResult::Status::Unsized;
        break;
    default:
        result.status = WalkResult::Status::Fault;
        break;
    }
    result.segments.reserve(w.nsegs);
    for (uint32_t i = 0; i < w.nsegs; i++) {
        const auto& s = segs[i];
        result.segments.push_back({s.addr, s.len, s.buf_index, s.dir == RW_BUF_OUT ? Direction::Out : Direction::In,
                                   (s.seg_flags & RW_SEG_STRING) != 0});
    }
    return result;
}

CapturedMemory capture_syscall_memory(const TraceeMemory& mem, int nr, const uint64_t (&args)[RW_MAX_ARGS], int64_t ret)
{
    CapturedMemory captured;
    std::vector<MemoryRange>& out = captured.memory;
    ResolvedSpec resolved = resolve_spec(nr, args);
    if (!resolved.known)
        return captured;
    UserReader reader = [&](uint64_t addr, void* dst, size_t size) {
        return mem.read(RemoteAddr(addr), {static_cast<uint8_t*>(dst), size});
    };
    StateReader state = [&](uint32_t which, uint64_t key) { return read_state_size(mem.tid(), which, key); };
    WalkResult walk = walk_buffers(resolved.spec, args, ret, reader, state);
    if (walk.status == WalkResult::Status::TooComplex)
        captured.problem = syscall_name(nr) + ": more memory segments than rewind captures";
    else if (walk.status == WalkResult::Status::Fault)
        captured.problem = syscall_name(nr) +
                           ": a buffer description (a struct the call reads a pointer or a size from) was unreadable";
    else if (walk.status == WalkResult::Status::Unsized)
        captured.unsized = true;
    for (const auto& s : walk.segments) {
        MemoryRange r;
        r.addr = s.addr;
        r.buffer = s.buffer;
        r.dir = s.dir;
        if (s.is_string) {
            auto str = mem.read_string(RemoteAddr(s.addr), s.len);
            if (str) {
                r.bytes.assign(str->begin(), str->end());
                r.bytes.push_back(0);
            } else {
                r.unreadable = true;
            }
        } else {
            r.bytes.resize(s.len);
            size_t got = mem.read_partial(RemoteAddr(s.addr), r.bytes);
            if (got < s.len) {
                // What is readable, then what is not (a buffer the table
                // sizes for the largest case, which ends at an unmapped
                // page: capget's data for an older header version).
                r.bytes.resize(got);
                MemoryRange rest = r;
                rest.addr = s.addr + got;
                rest.bytes.clear();
                rest.unreadable = true;
                rest.length = s.len - got;
                if (got) {
                    r.length = got;
                    out.push_back(std::move(r));
                }
                out.push_back(std::move(rest));
                continue;
            }
        }
        if (!r.unreadable)
            r.length = r.bytes.size();
        out.push_back(std::move(r));
    }
    return captured;
}

std::optional<ProcessMemoryWrite> process_memory_written(const TraceeMemory& mem, int nr,
                                                         const uint64_t (&args)[RW_MAX_ARGS], int64_t ret)
{
    const rw_sys_spec spec = resolve_spec(nr, args).spec;
    if (spec.view == RW_VIEW_WRITES_PROCESS && ret > 0) {
        // process_vm_writev: where, if it wrote into one piece (the first
        // remote iovec holds it all); into the caller's own process, the
        // table's outputs say where.
        auto caller = proc_status_number(mem.tid(), "Tgid");
        if (!caller || static_cast<int64_t>(args[0]) == *caller || args[4] < 1)
            return std::nullopt;
        uint64_t first[2] = {0, 0}; // iov_base, iov_len
        std::vector<uint8_t> bytes(sizeof first);
        if (!mem.read(RemoteAddr(args[3]), bytes))
            return std::nullopt;
        std::memcpy(first, bytes.data(), sizeof first);
        if (first[1] < static_cast<uint64_t>(ret))
            return std::nullopt;
        return ProcessMemoryWrite{static_cast<Tid>(args[0]), first[0]};
    }
    if (!(spec.flags & RW_SYS_WRITES_FILE) || ret <= 0)
        return std::nullopt;
    std::string fd = "/proc/" + std::to_string(mem.tid()) + "/fd/" + std::to_string(args[0]);
    std::error_code ec;
    std::string target = std::filesystem::read_symlink(fd, ec).string();
    // "/proc/N/mem" or "/proc/N/task/M/mem".
    long n = 0;
    if (ec || std::sscanf(target.c_str(), "/proc/%ld/", &n) != 1 || !target.ends_with("/mem"))
        return std::nullopt;
    ProcessMemoryWrite w;
    w.tid = static_cast<Tid>(n);
    if (spec.offset_arg < RW_MAX_ARGS && static_cast<int64_t>(args[spec.offset_arg]) != -1) {
        w.at = args[spec.offset_arg];
    } else {
        // The file position after the write, less what it wrote.
        std::ifstream info("/proc/" + std::to_string(mem.tid()) + "/fdinfo/" + std::to_string(args[0]));
        std::string key;
        uint64_t pos = 0;
        if (!(info >> key >> pos) || key != "pos:")
            return std::nullopt;
        w.at = pos - static_cast<uint64_t>(ret);
    }
    return w;
}

MemoryRange own_memory_written(const TraceeMemory& mem, const ProcessMemoryWrite& written, int nr,
                               const uint64_t (&args)[RW_MAX_ARGS], int64_t ret)
{
    MemoryRange r;
    r.addr = written.at;
    r.buffer = resolve_spec(nr, args).spec.nbufs;
    r.dir = Direction::Out;
    r.bytes.resize(static_cast<size_t>(ret));
    r.unreadable = !mem.read(RemoteAddr(written.at), r.bytes);
    if (r.unreadable)
        r.bytes.clear();
    r.length = static_cast<uint64_t>(ret);
    return r;
}

void finalize_memory(SyscallEvent& e)
{
    std::vector<MemoryRange> merged;
    for (auto& r : e.memory) {
        if (!merged.empty()) {
            auto& last = merged.back();
            if (!last.unreadable && !r.unreadable && last.buffer == r.buffer && last.dir == r.dir &&
                last.addr + last.bytes.size() == r.addr) {
                last.bytes.insert(last.bytes.end(), r.bytes.begin(), r.bytes.end());
                last.length = last.bytes.size();
                continue;
            }
        }
        merged.push_back(std::move(r));
    }
    const SyscallInfo* info = find_syscall(e.nr);
    // Replay writes what went into a mapped file into its own copy.
    // So does replay with what went into another process's memory.
    bool keep_inputs = (info && info->fd_arg >= 0 && e.args[info->fd_arg] < kKeepInputFdLimit) ||
                       (e.flags & (kSyscallMappedWrite | kSyscallWroteProcess));
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    const rw_sys_spec spec = resolve_spec(e.nr, args).spec;
    auto kept = [&](uint8_t buffer) { return buffer < spec.nbufs && (spec.bufs[buffer].flags & RW_BUF_KEEP); };
    for (auto& r : merged) {
        if (r.unreadable)
            continue;
        r.length = r.bytes.size();
        // An output's bytes are kept and replay compares them byte for
        // byte; only inputs need a hash (hashing every byte a program reads
        // was a seventh of the recorder's time on read-heavy programs).
        if (r.dir == Direction::Out)
            continue;
        r.hash = hash_bytes(r.bytes.data(), r.bytes.size());
        if (r.length > kKeepInputBytes && !keep_inputs && !kept(r.buffer)) {
            r.hashed_only = true;
            r.bytes.clear();
            r.bytes.shrink_to_fit();
        }
    }
    e.memory = std::move(merged);
}

} // namespace rw
