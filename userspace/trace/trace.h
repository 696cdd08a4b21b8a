// A recorded trace, opened for reading.
#pragma once

#include <filesystem>
#include <optional>
#include <memory>
#include <string>

#include "event_stream.h"
#include "file_copies.h"
#include "file_store.h"
#include "trace_meta.h"

namespace rw {

class Trace {
public:
    // Throws TraceDirError / FormatError with a message for the user.
    explicit Trace(std::filesystem::path dir);

    const std::filesystem::path& dir() const { return dir_; }
    std::string name() const { return dir_.filename().string(); }
    const TraceMeta& meta() const { return meta_; }
    // Absent when the recorder did not finish (killed, crashed).
    const std::optional<TraceEnd>& end() const { return end_; }

    EventStreamReader events() const;
    // The stream as stored: reads recorded by reference keep only the name
    // of their copy and an offset (MemoryRange::file_copy), no bytes.
    EventStreamReader events_as_stored() const;
    // The trace's copy of a file by its content hash. A name that is not a
    // content hash (a crafted trace: "../../x") is refused (FormatError).
    std::filesystem::path file_copy(const std::string& content_hash) const;
    // The same, after checking the copy's content against its hash (once
    // per copy); "" and `why` set if it is missing or differs.
    std::filesystem::path verified_file_copy(const std::string& content_hash, std::string& why) const;
    // The same copy, open for reading; an empty UniqueFd and `why` set if
    // it is missing, differs or is not a regular file of the trace.
    UniqueFd open_verified_file_copy(const std::string& content_hash, std::string& why) const;

private:
    std::filesystem::path dir_;
    TraceMeta meta_;
    std::optional<TraceEnd> end_;
    std::shared_ptr<FileCopies> copies_;
};

} // namespace rw
