// The trace's copies of files (files/, named by content hash), as readers
// of a trace use them: checked against their names before first use, and
// read from for the outputs of reads recorded by reference.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "unique_fd.h"

namespace rw {

class FileCopies {
public:
    // The copies of the trace in `trace_dir` (its files/).
    explicit FileCopies(std::filesystem::path trace_dir) : trace_dir_(std::move(trace_dir)) {}

    // The copy's path. A name that is not a content hash (a crafted trace:
    // "../../x") is refused (FormatError).
    std::filesystem::path path_of(const std::string& content_hash) const;
    // The same, after checking the copy's content against its name (once
    // per copy); "" and `why` set if it is missing or differs.
    std::filesystem::path verified(const std::string& content_hash, std::string& why);
    // A verified copy, open for reading (as trace_file.h opens a trace's
    // files); an empty UniqueFd and `why` set if it is missing or differs.
    UniqueFd open_verified(const std::string& content_hash, std::string& why);
    // `length` bytes of a verified copy from `offset`; FormatError if the
    // copy is missing, altered or shorter.
    std::vector<uint8_t> read(const std::string& content_hash, uint64_t offset, uint64_t length);

private:
    std::filesystem::path verified_locked(const std::string& content_hash, std::string& why);
    // The copy opened safely, or an empty UniqueFd and `why`.
    UniqueFd open_copy(const std::string& content_hash, std::string& why) const;
    std::filesystem::path trace_dir_;
    std::mutex mutex_;
    std::set<std::string> verified_;
    struct Open {
        UniqueFd fd;
        uint64_t size = 0;
    };
    std::map<std::string, Open> open_;
};

} // namespace rw
