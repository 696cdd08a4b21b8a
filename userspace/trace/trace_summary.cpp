#include "trace_summary.h"

#include <cstdio>
#include <filesystem>

#include "replay_limits.h"
#include "syscall_table.h"
#include "trace.h"
#include "trace_dir.h"

namespace rw {

std::string describe_unknown(const SyscallEvent& e)
{
    std::string name = syscall_name(e.nr);
    const SyscallInfo* info = find_syscall(e.nr);
    if (!info || !(info->spec.flags & RW_SYS_DISPATCH))
        return name;
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    if (const SubcommandInfo* sub = resolve_spec(e.nr, args).subcommand)
        return name + "(" + std::string(sub->name) + ")";
    uint64_t value = e.args[info->spec.dispatch_arg < RW_MAX_ARGS ? info->spec.dispatch_arg : 0];
    if (info->spec.dispatch_mask_bits)
        value &= (uint64_t(1) << info->spec.dispatch_mask_bits) - 1;
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx", static_cast<unsigned long long>(value));
    return name + "(" + buf + ")";
}

TraceSummary summarize(const Trace& trace)
{
    TraceSummary s;
    // The copies reads refer to are checked on their own (verify_file_copies).
    EventStreamReader reader = trace.events_as_stored();
    Event event;
    RecordedSegments segments;
    while (reader.next(event)) {
        uint64_t index = s.events++;
        s.by_kind[std::string(event_kind_name(event))]++;
        const auto* call = std::get_if<SyscallEvent>(&event);
        if (call)
            segments.note(*call);
        if (!s.replay_stops) {
            auto why = replay_limit(event);
            if (!why && call)
                why = segments.attach_limit(*call);
            if (why)
                s.replay_stops.emplace(index, *why);
        }
        std::visit(
            [&](const auto& e) {
                using T = std::decay_t<decltype(e)>;
                if constexpr (std::is_same_v<T, SyscallEvent>) {
                    // A child's return from fork is the parent's call, not a new
                    // one; exit and exit_group never return, so they show as exit
                    // events (strace -c counts neither).
                    if (!(e.flags & kSyscallChildReturn))
                        s.syscalls[syscall_name(e.nr)]++;
                    s.threads.insert(e.tid);
                    s.processes.insert(e.tgid);
                    for (const auto& m : e.memory) {
                        s.memory_bytes += m.length;
                        if (!m.file_copy.empty())
                            s.copies_named.try_emplace(m.file_copy,
                                                       TraceSummary::CopyUse{"a file read by reference", index});
                    }
                    if (e.flags & kSyscallRebuilt)
                        s.rebuilt++;
                    if (e.file && !e.file->content_hash.empty())
                        s.copies_named.try_emplace(e.file->content_hash, TraceSummary::CopyUse{e.file->path, index});
                    if (e.flags & (kSyscallUnknown | kSyscallUnknownSubcommand)) {
                        auto& u = s.unknown[describe_unknown(e)];
                        if (u.count++ == 0) {
                            u.what = describe_unknown(e);
                            u.first_event = index;
                        }
                        if (!failed(e) && !u.first_success)
                            u.first_success = index;
                    }
                } else if constexpr (std::is_same_v<T, ForkEvent>) {
                    s.threads.insert(e.child_tid);
                    s.processes.insert(e.child_tgid);
                } else if constexpr (std::is_same_v<T, ExecEvent>) {
                    s.processes.insert(e.tgid);
                    s.threads.insert(e.tid);
                    for (const auto& m : e.mappings)
                        if (!m.content_hash.empty())
                            s.copies_named.try_emplace(m.content_hash, TraceSummary::CopyUse{m.path, index});
                } else if constexpr (std::is_same_v<T, NoteEvent>) {
                    if (e.kind == NoteKind::Incomplete)
                        s.incomplete.emplace_back(index, e.message);
                }
            },
            event);
    }
    s.stream_end = reader.end();
    std::error_code ec;
    s.stream_bytes = std::filesystem::file_size(trace.dir() / trace_files::kEvents, ec);
    // Never listed through a link (trace_file.h): it would tell the names
    // in whatever directory it leads to.
    std::filesystem::path files = trace.dir() / trace_files::kFiles;
    if (std::filesystem::symlink_status(files, ec).type() != std::filesystem::file_type::directory)
        return s;
    for (const auto& f : std::filesystem::directory_iterator(files, ec)) {
        if (f.path().filename().string().starts_with("."))
            continue;
        s.file_copies++;
        if (f.is_regular_file(ec) && !f.is_symlink(ec))
            s.file_bytes += f.file_size(ec);
    }
    return s;
}

} // namespace rw
