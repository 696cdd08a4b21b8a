#include "trace.h"

#include <algorithm>

#include "bytes.h"
#include "file_store.h"
#include "trace_dir.h"

namespace rw {

Trace::Trace(std::filesystem::path dir) : dir_(std::move(dir)), copies_(std::make_shared<FileCopies>(dir_))
{
    require_trace(dir_);
    meta_ = read_meta(dir_);
    require_readable_format(dir_.string(), meta_.format_version);
    end_ = read_end(dir_);
}

EventStreamReader Trace::events_as_stored() const
{
    return EventStreamReader(dir_ / trace_files::kEvents);
}

EventStreamReader Trace::events() const
{
    EventStreamReader reader(dir_ / trace_files::kEvents);
    reader.read_copies_from(copies_);
    return reader;
}

std::filesystem::path Trace::file_copy(const std::string& content_hash) const
{
    return copies_->path_of(content_hash);
}

std::filesystem::path Trace::verified_file_copy(const std::string& content_hash, std::string& why) const
{
    return copies_->verified(content_hash, why);
}

UniqueFd Trace::open_verified_file_copy(const std::string& content_hash, std::string& why) const
{
    return copies_->open_verified(content_hash, why);
}

} // namespace rw
