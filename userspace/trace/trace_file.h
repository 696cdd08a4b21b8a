// The one way a reader opens a file of a trace. A trace is untrusted input
// (someone else's recording, a copied or damaged directory, a trace root
// opens that another user owns): a file of it that is a symbolic link
// would make rewind read, and quote, whatever the link names; a FIFO would
// block it; a device would never end. So a trace's files are opened
// relative to the trace directory, no component of their path is followed
// if it is a link, and only regular files are opened at all.
#pragma once

#include <filesystem>
#include <string>

#include "bytes.h"
#include "unique_fd.h"

namespace rw {

// A file of the trace that is not a regular file inside it (a link, a FIFO,
// a directory...), or that cannot be opened. A kind of damage: readers
// report it as they report a corrupt trace.
struct TraceFileError : FormatError {
    using FormatError::FormatError;
};

// Opens `relative` (a path inside the trace directory `trace_dir`, such as
// "meta.json" or "files/<hash>") for reading. Throws TraceFileError naming
// the file and what it is instead of a regular file; when `may_be_missing`,
// a file that does not exist gives an empty UniqueFd instead.
UniqueFd open_trace_file(const std::filesystem::path& trace_dir, const std::filesystem::path& relative,
                         bool may_be_missing = false);

// The whole content of an open trace file, refusing one larger than
// `max_bytes` (TraceFileError naming `shown_name`).
std::string read_whole_trace_file(int fd, const std::string& shown_name, size_t max_bytes);

} // namespace rw
