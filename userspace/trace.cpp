#include "trace.h"

#include <algorithm>

#include "bytes.h"
#include "file_store.h"
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

bool is_content_hash(const std::string& name)
{
    return name.size() == 32 && std::all_of(name.begin(), name.end(),
                                            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::filesystem::path Trace::file_copy(const std::string& content_hash) const
{
    if (!is_content_hash(content_hash))
        throw FormatError("the trace names a file copy '" + content_hash +
                          "', which is not a content hash (a damaged or crafted trace)");
    return dir_ / trace_files::kFiles / content_hash;
}

std::filesystem::path Trace::verified_file_copy(const std::string& content_hash, std::string& why) const
{
    std::filesystem::path copy = file_copy(content_hash);
    if (verified_.count(content_hash))
        return copy;
    // The store only ever writes regular files: a symbolic link would lead
    // out of the trace, and a FIFO or a device would never end.
    std::error_code ec;
    auto status = std::filesystem::symlink_status(copy, ec);
    if (!ec && status.type() != std::filesystem::file_type::regular) {
        why = "the trace's copy " + copy.filename().string() +
              " is not a regular file (a symbolic link, a device or a FIFO is never followed)";
        return {};
    }
    try {
        std::string actual = FileStore::hash_file(copy);
        if (actual != content_hash) {
            why = "the trace's copy " + copy.filename().string() + " has been altered (its content hashes to " +
                  actual + ")";
            return {};
        }
    } catch (const std::system_error& e) {
        why = "the trace's copy " + copy.filename().string() + " cannot be read: " + e.code().message();
        return {};
    }
    verified_.insert(content_hash);
    return copy;
}

} // namespace rw
