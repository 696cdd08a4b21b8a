// A recorded trace, opened for reading.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "event_stream.h"
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
    std::filesystem::path file_copy(const std::string& content_hash) const;

private:
    std::filesystem::path dir_;
    TraceMeta meta_;
    std::optional<TraceEnd> end_;
};

} // namespace rw
