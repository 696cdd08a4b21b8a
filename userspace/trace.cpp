#include "trace.h"

#include "bytes.h"
#include "trace_dir.h"

namespace rw {

Trace::Trace(std::filesystem::path dir) : dir_(std::move(dir))
{
    require_trace(dir_);
    meta_ = read_meta(dir_);
    if (meta_.format_version != kTraceFormatVersion)
        throw FormatError(dir_.string() + " has trace format version " + std::to_string(meta_.format_version) +
                          "; this rewind reads version " + std::to_string(kTraceFormatVersion));
    end_ = read_end(dir_);
}

EventStreamReader Trace::events() const
{
    return EventStreamReader(dir_ / trace_files::kEvents);
}

std::filesystem::path Trace::file_copy(const std::string& content_hash) const
{
    return dir_ / trace_files::kFiles / content_hash;
}

} // namespace rw
