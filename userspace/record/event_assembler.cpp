#include "event_assembler.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cstring>

#include "mapped_files.h"
#include "syscall_memory.h"
#include "syscall_table.h"
#include "trace_meta.h"

namespace rw {
namespace {

template <typename T> bool read_record(std::span<const uint8_t> rec, T& out)
{
    if (rec.size() < sizeof(T))
        return false;
    std::memcpy(&out, rec.data(), sizeof(T));
    return true;
}

} // namespace

void EventAssembler::on_record(std::span<const uint8_t> rec)
{
    records_++;
    rw_rec_header h;
    if (!read_record(rec, h)) {
        problems_.push_back("a ring record shorter than its header");
        return;
    }
    Tid tid = static_cast<Tid>(h.tid);
    switch (h.kind) {
    case RW_REC_DATA: {
        rw_rec_data d;
        if (!read_record(rec, d) || rec.size() < sizeof(d) + d.len) {
            problems_.push_back("a truncated data record");
            return;
        }
        auto& p = partial_[tid];
        if (!p.memory.empty() && p.seq != h.seq) {
            problems_.push_back("thread " + std::to_string(tid) + ": data of an unfinished syscall was replaced");
            p.memory.clear();
        }
        p.seq = h.seq;
        MemoryRange r;
        r.addr = d.addr;
        r.buffer = d.buf_index;
        r.dir = d.dir_flags == RW_BUF_OUT ? Direction::Out : Direction::In;
        r.bytes.assign(rec.begin() + sizeof(d), rec.begin() + sizeof(d) + d.len);
        r.length = d.len;
        p.memory.push_back(std::move(r));
        return;
    }
    case RW_REC_SYSCALL: {
        rw_rec_syscall s;
        if (!read_record(rec, s)) {
            problems_.push_back("a truncated syscall record");
            return;
        }
        std::vector<MemoryRange> memory;
        if (auto it = partial_.find(tid); it != partial_.end()) {
            if (it->second.seq == h.seq)
                memory = std::move(it->second.memory);
            else if (!it->second.memory.empty())
                problems_.push_back("thread " + std::to_string(tid) + ": data records of another syscall");
            partial_.erase(it);
        }
        emit_syscall(s, std::move(memory));
        return;
    }
    case RW_REC_FORK: {
        rw_rec_fork f;
        if (!read_record(rec, f)) {
            problems_.push_back("a truncated fork record");
            return;
        }
        ForkEvent e;
        e.seq = h.seq;
        e.parent_tid = tid;
        e.parent_tgid = static_cast<Tid>(f.parent_tgid);
        e.child_tid = static_cast<Tid>(f.child_tid);
        e.child_tgid = static_cast<Tid>(f.child_tgid);
        e.time_ns = f.ktime_ns;
        sink_.emit(std::move(e));
        return;
    }
    case RW_REC_YIELD: {
        rw_rec_yield y;
        if (!read_record(rec, y)) {
            problems_.push_back("a truncated yield record");
            return;
        }
        // The thread gave the CPU up here: its syscall's event goes here.
        expect_syscall(tid, y.nr, h.seq);
        yields_.push_back({tid, y.nr});
        return;
    }
    case RW_REC_SYNC: {
        rw_rec_sync y;
        if (!read_record(rec, y)) {
            problems_.push_back("a truncated synchronization record");
            return;
        }
        SyncEvent e;
        e.seq = h.seq;
        e.tid = tid;
        e.tgid = static_cast<Tid>(y.tgid);
        e.fn = y.fn;
        e.phase = (h.flags & RW_SYNC_ACQUIRE) ? SyncPhase::Acquire : SyncPhase::Release;
        e.object = y.object;
        e.entry = y.entry;
        e.ret = y.ret;
        sink_.emit(std::move(e));
        return;
    }
    case RW_REC_EXIT: {
        rw_rec_exit x;
        if (!read_record(rec, x)) {
            problems_.push_back("a truncated exit record");
            return;
        }
        ExitEvent e;
        e.seq = h.seq;
        e.tid = tid;
        e.tgid = static_cast<Tid>(x.tgid);
        e.exit_code = x.exit_code;
        e.group_exit_code = x.group_exit_code;
        e.group_dead = x.group_dead != 0;
        e.pending_nr = x.pending_nr;
        std::copy(std::begin(x.pending_args), std::end(x.pending_args), e.pending_args.begin());
        e.time_ns = x.ktime_ns;
        partial_.erase(tid);
        exits_.emplace_back(tid, e.tgid);
        // A thread killed inside a syscall (a sibling's exit_group): the call
        // never returns, and the exit happens where the kernel reported it.
        cancel_places(tid);
        sink_.emit(std::move(e));
        return;
    }
    }
    problems_.push_back("a ring record of unknown kind " + std::to_string(h.kind));
}

void EventAssembler::discard_partial(Tid tid)
{
    partial_.erase(tid);
}

void EventAssembler::emit_syscall(const rw_rec_syscall& s, std::vector<MemoryRange> memory, uint32_t extra_flags,
                                  std::optional<FileRef> file, uint64_t file_offset)
{
    SyscallEvent e;
    e.seq = s.h.seq;
    e.tid = static_cast<Tid>(s.h.tid);
    e.tgid = static_cast<Tid>(s.tgid);
    e.nr = s.nr;
    std::copy(std::begin(s.args), std::end(s.args), e.args.begin());
    e.ret = s.ret;
    e.ip = s.ip;
    e.sp = s.sp;
    // Readers take the unit from TraceEnd::kernel_hz (kThreadTimeHz).
    static_assert(1000000000 / RW_EXIT_TIME_UNIT_NS == kThreadTimeHz);
    e.exit_time = s.exit_time;
    e.flags = extra_flags;
    if (s.h.flags & RW_SC_UNKNOWN)
        e.flags |= kSyscallUnknown;
    if (s.h.flags & RW_SC_UNKNOWN_SUBCMD)
        e.flags |= kSyscallUnknownSubcommand;
    if (s.h.flags & RW_SC_CHILD_RETURN)
        e.flags |= kSyscallChildReturn;
    if (s.h.flags & RW_SC_IN_SYNC)
        e.flags |= kSyscallInSync;
    if (s.h.flags & RW_SC_FILE)
        e.file = files_.resolve(e.tid, static_cast<int>(s.args[4]), s.file);
    if (s.h.flags & RW_SC_MAPPED_WRITE) {
        e.flags |= kSyscallMappedWrite;
        // The device as stat() gives it, as a mapped file's reference has it.
        e.file = FileRef{kernel_dev_to_user(s.file.dev), s.file.ino, s.file.size, s.file.mtime_ns, "", ""};
        e.file_offset = static_cast<uint64_t>(s.file_offset);
    }
    if ((s.h.flags & RW_SC_FILE_CANDIDATE) && s.ret > 0)
        reads_.on_read_by_content(e.tid, e.tgid, static_cast<int>(s.args[0]), s.file, static_cast<uint64_t>(s.ret));
    if (file) {
        e.file = std::move(file);
        e.file_offset = file_offset;
    }
    e.memory = std::move(memory);
    finalize_memory(e);
    // The bytes are the copy's, unless the supervisor rebuilt the call from
    // the thread's memory (a stall): then its memory holds them.
    if ((s.h.flags & RW_SC_FILE_DATA) && s.ret > 0 && e.memory.empty())
        add_file_output(e, s);
    note_open(e);
    auto place = place_for(e.tid, e.nr);
    if (place)
        e.seq = *place;
    last_syscall_[e.tid] = e.seq;
    if (place)
        sink_.fill(std::move(e));
    else
        sink_.emit(std::move(e));
}

void EventAssembler::note_open(const SyscallEvent& e)
{
    bool relative_to_cwd = e.nr == SYS_open || (e.nr == SYS_openat && static_cast<int>(e.args[0]) == AT_FDCWD);
    if (!relative_to_cwd || e.ret < 0 || e.memory.empty() || e.memory[0].bytes.empty())
        return;
    const auto& bytes = e.memory[0].bytes;
    std::string path(bytes.begin(), std::find(bytes.begin(), bytes.end(), uint8_t(0)));
    reads_.on_open(e.tgid, static_cast<int>(e.ret), path);
}

void EventAssembler::add_file_output(SyscallEvent& e, const rw_rec_syscall& s)
{
    const SyscallInfo* info = find_syscall(s.nr);
    std::string copy = reads_.copy_of(s.file, static_cast<uint64_t>(s.ret));
    if (!info || !(info->spec.flags & RW_SYS_READS_FILE) || copy.empty()) {
        // The kernel side refers only to copies this recorder shared.
        problems_.push_back("a read of a file at event " + std::to_string(e.seq) +
                            " refers to a copy the recorder does not know: its bytes are missing");
        e.flags |= kSyscallUnknown;
        return;
    }
    MemoryRange m;
    m.addr = s.args[info->spec.bufs[0].ptr_arg];
    m.buffer = 0;
    m.dir = Direction::Out;
    m.length = static_cast<uint64_t>(s.ret);
    m.file_copy = std::move(copy);
    m.file_offset = static_cast<uint64_t>(s.file_offset);
    e.memory.push_back(std::move(m));
}

void EventAssembler::expect_syscall(Tid tid, int nr, std::optional<uint64_t> place)
{
    if (place)
        sink_.reserve(*place);
    expected_[tid].push_back({nr, place});
}

std::optional<uint64_t> EventAssembler::place_for(Tid tid, int nr)
{
    auto it = expected_.find(tid);
    if (it == expected_.end())
        return std::nullopt;
    // The supervisor reads the ring before it expects a thread's next
    // syscall, so the front is this record's entry, unless the call was
    // entered before the thread's process was serialized.
    auto& queue = it->second;
    if (queue.empty() || queue.front().nr != nr)
        return std::nullopt;
    auto place = queue.front().place;
    queue.pop_front();
    return place;
}

void EventAssembler::cancel_places(Tid tid)
{
    auto it = expected_.find(tid);
    if (it == expected_.end())
        return;
    for (const auto& x : it->second)
        if (x.place)
            sink_.cancel(*x.place);
    expected_.erase(it);
}

std::optional<uint64_t> EventAssembler::last_syscall_seq(Tid tid) const
{
    auto it = last_syscall_.find(tid);
    if (it == last_syscall_.end())
        return std::nullopt;
    return it->second;
}

} // namespace rw
