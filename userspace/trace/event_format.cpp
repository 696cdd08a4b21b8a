#include "text.h"
#include "event_format.h"

#include <fmt/core.h>
#include <sys/wait.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "sync_calls.h"
#include "syscall_table.h"
#include "trace_summary.h"

namespace rw {
namespace {

// The string an input buffer captured for argument `arg`, if any.
const MemoryRange* string_for_arg(const SyscallEvent& e, const rw_sys_spec& spec, int arg)
{
    for (uint8_t b = 0; b < spec.nbufs; b++) {
        if (spec.bufs[b].ptr_arg != arg || spec.bufs[b].kind != RW_SZ_CSTRING)
            continue;
        for (const auto& m : e.memory)
            if (m.buffer == b && m.dir == Direction::In && !m.hashed_only && !m.unreadable)
                return &m;
    }
    return nullptr;
}

std::string format_arg(const SyscallEvent& e, const rw_sys_spec& spec, int i, char kind)
{
    uint64_t v = e.args[i];
    switch (kind) {
    case 'd':
        return std::to_string(static_cast<int64_t>(v));
    case 'f':
        return std::to_string(static_cast<int32_t>(v));
    case 'u':
        return std::to_string(v);
    case 'o':
        return fmt::format("{:#o}", v);
    case 'S':
        return signal_name(static_cast<int>(v));
    case 'p':
        return v ? hex(v) : "NULL";
    case 's':
        if (const MemoryRange* m = string_for_arg(e, spec, i)) {
            size_t n = m->bytes.size() && m->bytes.back() == 0 ? m->bytes.size() - 1 : m->bytes.size();
            return "\"" + escape_bytes(m->bytes.data(), n, 256) + "\"";
        }
        return v ? hex(v) : "NULL";
    default:
        return hex(v);
    }
}

} // namespace

std::string escape_bytes(const uint8_t* data, size_t size, size_t limit)
{
    std::string out;
    size_t n = std::min(size, limit);
    for (size_t i = 0; i < n; i++) {
        uint8_t c = data[i];
        switch (c) {
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        default:
            if (c >= 0x20 && c < 0x7f)
                out.push_back(static_cast<char>(c));
            else
                out += fmt::format("\\x{:02x}", c);
        }
    }
    if (size > n)
        out += "...";
    return out;
}

int failed_errno(const Event& event)
{
    const auto* sc = std::get_if<SyscallEvent>(&event);
    if (!sc || sc->ret >= 0 || sc->ret < -4095)
        return 0;
    constexpr int kFirstKernelInternal = 512, kLastKernelInternal = 530; // ERESTARTSYS .. ENOGRACE
    int err = static_cast<int>(-sc->ret);
    return err >= kFirstKernelInternal && err <= kLastKernelInternal ? 0 : err;
}

std::string format_return(int nr, int64_t ret)
{
    if (ret < 0 && ret >= -4095) {
        int err = static_cast<int>(-ret);
        const char* name = strerrorname_np(err);
        if (name)
            return fmt::format("-1 {} ({})", name, strerror(err));
        switch (err) { // kernel-internal codes, seen when a signal interrupts
        case 512:
            return "? ERESTARTSYS";
        case 513:
            return "? ERESTARTNOINTR";
        case 514:
            return "? ERESTARTNOHAND";
        case 516:
            return "? ERESTART_RESTARTBLOCK";
        default:
            return fmt::format("-1 (errno {})", err);
        }
    }
    const SyscallInfo* info = find_syscall(nr);
    if (info && (info->replay == ReplayAction::Mmap || info->name == "brk" || info->name == "mremap"))
        return hex(static_cast<uint64_t>(ret));
    return std::to_string(ret);
}

std::string format_syscall_call(const SyscallEvent& e)
{
    const SyscallInfo* info = find_syscall(e.nr);
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    ResolvedSpec resolved = resolve_spec(e.nr, args);
    std::string out = syscall_name(e.nr) + "(";
    if (info) {
        for (size_t i = 0; i < info->arg_formats.size() && i < 6; i++) {
            if (i)
                out += ", ";
            if (resolved.subcommand && static_cast<int>(i) == info->spec.dispatch_arg)
                out += std::string(resolved.subcommand->name);
            else
                out += format_arg(e, resolved.spec, static_cast<int>(i), info->arg_formats[i]);
        }
    } else {
        for (size_t i = 0; i < 6; i++)
            out += (i ? ", " : "") + hex(e.args[i]);
    }
    return out + ") = " + format_return(e.nr, e.ret);
}

std::string format_event(uint64_t index, const Event& event, const FormatOptions& options)
{
    std::string head = fmt::format("#{:<6} [{}] ", index, event_tid(event));
    return std::visit(
        [&](const auto& e) -> std::string {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, SyscallEvent>) {
                std::string s = head + format_syscall_call(e);
                if (e.flags & (kSyscallUnknown | kSyscallUnknownSubcommand))
                    s += "   <effects unknown: " + describe_unknown(e) + ">";
                if (e.flags & kSyscallRebuilt)
                    s += "   <captured by the supervisor>";
                if (e.flags & kSyscallInSync)
                    s += "   <inside a synchronization call>";
                if (e.file && (e.flags & kSyscallWroteProcess))
                    s += fmt::format("   <writes the memory of {} at {:#x}>", e.file->path, e.file_offset);
                else if (e.file && (e.flags & kSyscallMappedWrite))
                    s += fmt::format("   <writes a mapped file, inode {}:{}, at {}; {} bytes after>", e.file->dev,
                                     e.file->ino, e.file_offset, e.file->size);
                else if (e.file)
                    s += fmt::format("   <file {} {}>", e.file->path,
                                     e.file->content_hash.empty() ? "not copied" : e.file->content_hash);
                for (const auto& m : e.memory) {
                    s += fmt::format("\n          {}[{}] {:#x} {} bytes", m.dir == Direction::Out ? "out" : "in",
                                     m.buffer, m.addr, m.length);
                    if (!m.file_copy.empty())
                        s += fmt::format(" (file copy {} at {})", m.file_copy, m.file_offset);
                    if (m.unreadable)
                        s += " (unreadable)";
                    else if (m.hashed_only)
                        s += fmt::format(" (hash {:016x})", m.hash);
                    else if (options.bytes != 0)
                        s += " \"" +
                             escape_bytes(m.bytes.data(), m.bytes.size(),
                                          options.bytes < 0 ? SIZE_MAX : static_cast<size_t>(options.bytes)) +
                             "\"";
                }
                return s;
            } else if constexpr (std::is_same_v<T, ForkEvent>) {
                return head + fmt::format("{} -> new {} {} (process {})", e.parent_tid,
                                          e.is_thread() ? "thread" : "process", e.child_tid, e.child_tgid);
            } else if constexpr (std::is_same_v<T, ExecEvent>) {
                std::string argv;
                for (const auto& a : e.argv)
                    argv += (argv.empty() ? "" : " ") + a;
                std::string s = head + fmt::format("exec {} [{}] ({} mappings)", e.filename, argv, e.mappings.size());
                return s;
            } else if constexpr (std::is_same_v<T, ExitEvent>) {
                std::string how = WIFSIGNALED(e.exit_code) ? "killed by " + signal_name(WTERMSIG(e.exit_code))
                                                           : "exit status " + std::to_string(WEXITSTATUS(e.exit_code));
                return head +
                       fmt::format("thread exit: {}{}", how, e.group_dead ? " (last thread of its process)" : "");
            } else if constexpr (std::is_same_v<T, SignalEvent>) {
                siginfo_t si;
                std::memcpy(&si, e.siginfo.data(), sizeof(si));
                const char* where = e.kind == SignalKind::Fault       ? "fault"
                                    : e.kind == SignalKind::AtSyscall ? "delivered at syscall exit"
                                                                      : "delivered in user code (fallback)";
                std::string s =
                    head + fmt::format("signal {} ({}) code {} at rip {:#x}, after event seq {}", signal_name(e.signo),
                                       where, si.si_code, e.regs[Registers::RIP], e.anchor_seq);
                if (!e.pages.empty())
                    s += fmt::format(" (checked: registers, {} pages it writes)", e.pages.size());
                return s;
            } else if constexpr (std::is_same_v<T, RdtscEvent>) {
                return head + fmt::format("{} at {:#x} = {}", e.rdtscp ? "rdtscp" : "rdtsc", e.ip, e.tsc);
            } else if constexpr (std::is_same_v<T, RandomEvent>) {
                return head + fmt::format("{} at {:#x} = {:#x}", e.seed ? "rdseed" : "rdrand", e.ip, e.value);
            } else if constexpr (std::is_same_v<T, PreemptEvent>) {
                return head + fmt::format("preempted at rip {:#x} (checked: registers, {} pages it writes)",
                                          e.regs[Registers::RIP], e.pages.size());
            } else if constexpr (std::is_same_v<T, SyncEvent>) {
                std::string r =
                    head + fmt::format("{} {}({:#x}) at {:#x}", e.phase == SyncPhase::Release ? "release" : "acquire",
                                       sync_call_name(e.fn), e.object, e.entry);
                if (e.phase == SyncPhase::Acquire)
                    r += fmt::format(" = {}", e.ret);
                return r;
            } else {
                return head + fmt::format("{}: {}", e.kind == NoteKind::Incomplete ? "INCOMPLETE" : "note", e.message);
            }
        },
        event);
}

nlohmann::json event_to_json(uint64_t index, const Event& event, const FormatOptions& options)
{
    using nlohmann::json;
    json j = {{"index", index}, {"seq", event_seq(event)}, {"kind", event_kind_name(event)}};
    auto to_hex = [&](const std::vector<uint8_t>& bytes) {
        size_t n = options.bytes < 0 ? bytes.size() : std::min(bytes.size(), static_cast<size_t>(options.bytes));
        std::string s;
        s.reserve(n * 2);
        static const char digits[] = "0123456789abcdef";
        for (size_t i = 0; i < n; i++) {
            s.push_back(digits[bytes[i] >> 4]);
            s.push_back(digits[bytes[i] & 15]);
        }
        return s;
    };
    auto regs_json = [](const Registers& r) {
        json out = json::object();
        for (size_t i = 0; i < Registers::kCount; i++)
            out[std::string(register_name(i))] = r.words[i];
        return out;
    };
    std::visit(
        [&](const auto& e) {
            using T = std::decay_t<decltype(e)>;
            if constexpr (std::is_same_v<T, SyscallEvent>) {
                j["tid"] = e.tid;
                j["tgid"] = e.tgid;
                j["nr"] = e.nr;
                j["name"] = syscall_name(e.nr);
                j["args"] = e.args;
                j["ret"] = e.ret;
                j["ip"] = e.ip;
                j["sp"] = e.sp;
                j["exit_time"] = e.exit_time;
                j["text"] = format_syscall_call(e);
                json flags = json::array();
                if (e.flags & kSyscallUnknown)
                    flags.push_back("unknown");
                if (e.flags & kSyscallUnknownSubcommand)
                    flags.push_back("unknown-subcommand");
                if (e.flags & kSyscallRebuilt)
                    flags.push_back("rebuilt");
                if (e.flags & kSyscallChildReturn)
                    flags.push_back("child-return");
                if (e.flags & kSyscallInSync)
                    flags.push_back("in-sync");
                if (e.flags & kSyscallMappedWrite)
                    flags.push_back("mapped-write");
                if (e.flags & kSyscallWroteProcess)
                    flags.push_back("wrote-process");
                if (e.flags & kSyscallUnsized)
                    flags.push_back("unsized");
                j["flags"] = flags;
                json mem = json::array();
                for (const auto& m : e.memory) {
                    json r = {{"addr", m.addr},
                              {"buffer", m.buffer},
                              {"dir", m.dir == Direction::Out ? "out" : "in"},
                              {"length", m.length}};
                    if (m.dir == Direction::In)
                        r["hash"] = fmt::format("{:016x}", m.hash);
                    if (!m.file_copy.empty()) {
                        r["file_copy"] = m.file_copy;
                        r["file_offset"] = m.file_offset;
                    }
                    if (m.unreadable)
                        r["unreadable"] = true;
                    else if (m.hashed_only)
                        r["hashed_only"] = true;
                    else
                        r["data_hex"] = to_hex(m.bytes);
                    mem.push_back(r);
                }
                j["memory"] = mem;
                if (e.file)
                    j["file"] = {{"path", e.file->path}, {"content_hash", e.file->content_hash},
                                 {"dev", e.file->dev},   {"ino", e.file->ino},
                                 {"size", e.file->size}, {"offset", e.file_offset}};
            } else if constexpr (std::is_same_v<T, ForkEvent>) {
                j["tid"] = e.parent_tid;
                j["tgid"] = e.parent_tgid;
                j["child_tid"] = e.child_tid;
                j["child_tgid"] = e.child_tgid;
                j["thread"] = e.is_thread();
            } else if constexpr (std::is_same_v<T, ExecEvent>) {
                j["tid"] = e.tid;
                j["tgid"] = e.tgid;
                j["former_tid"] = e.former_tid;
                j["filename"] = e.filename;
                j["executable"] = e.executable;
                j["argv"] = e.argv;
                j["envp"] = e.envp;
                j["auxv"] = e.auxv;
                j["regs"] = regs_json(e.regs);
                json maps = json::array();
                for (const auto& m : e.mappings)
                    maps.push_back({{"start", m.start},
                                    {"end", m.end},
                                    {"perms", m.perms},
                                    {"offset", m.offset},
                                    {"path", m.path},
                                    {"content_hash", m.content_hash}});
                j["mappings"] = maps;
            } else if constexpr (std::is_same_v<T, ExitEvent>) {
                j["tid"] = e.tid;
                j["tgid"] = e.tgid;
                j["exit_code"] = e.exit_code;
                j["group_exit_code"] = e.group_exit_code;
                j["group_dead"] = e.group_dead;
                j["pending_nr"] = e.pending_nr;
            } else if constexpr (std::is_same_v<T, SignalEvent>) {
                j["tid"] = e.tid;
                j["tgid"] = e.tgid;
                j["signo"] = e.signo;
                j["signal"] = signal_name(e.signo);
                j["delivery"] = e.kind == SignalKind::Fault       ? "fault"
                                : e.kind == SignalKind::AtSyscall ? "at-syscall"
                                                                  : "at-position";
                j["anchor_seq"] = e.anchor_seq;
                j["regs"] = regs_json(e.regs);
                if (e.kind == SignalKind::AtPosition) {
                    j["pages"] = e.pages;
                    j["pages_hash"] = e.pages_hash;
                    if (e.pages_sum)
                        j["pages_sum"] = e.pages_sum;
                }
            } else if constexpr (std::is_same_v<T, RdtscEvent>) {
                j["tid"] = e.tid;
                j["ip"] = e.ip;
                j["tsc"] = e.tsc;
                j["aux"] = e.aux;
                j["rdtscp"] = e.rdtscp;
            } else if constexpr (std::is_same_v<T, RandomEvent>) {
                j["tid"] = e.tid;
                j["ip"] = e.ip;
                j["value"] = e.value;
                j["instruction"] = e.seed ? "rdseed" : "rdrand";
            } else if constexpr (std::is_same_v<T, PreemptEvent>) {
                j["tid"] = e.tid;
                j["regs"] = regs_json(e.regs);
                j["pages"] = e.pages;
                j["pages_hash"] = e.pages_hash;
            } else if constexpr (std::is_same_v<T, SyncEvent>) {
                j["tid"] = e.tid;
                j["tgid"] = e.tgid;
                j["function"] = sync_call_name(e.fn);
                j["fn"] = e.fn;
                j["phase"] = e.phase == SyncPhase::Release ? "release" : "acquire";
                j["object"] = e.object;
                j["entry"] = e.entry;
                if (e.phase == SyncPhase::Acquire)
                    j["ret"] = e.ret;
            } else {
                j["tid"] = e.tid;
                j["note"] = e.kind == NoteKind::Incomplete ? "incomplete" : "info";
                j["message"] = e.message;
            }
        },
        event);
    return j;
}

} // namespace rw
