// Where traces live and how they are named.
//
//   $REWIND_DIR (default ~/.local/share/rewind)/
//     latest -> prog-3          the most recent recording
//     prog-3/
//       meta.json  events  end.json  files/<content hash>
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rw {

namespace trace_files {
inline constexpr const char* kMeta = "meta.json";
inline constexpr const char* kEnd = "end.json";
inline constexpr const char* kEvents = "events";
inline constexpr const char* kFiles = "files";
// An attached recording's start image (a landmark at event 0).
inline constexpr const char* kStartImage = "start";
// While a recording runs: the recorder's pid and start time (rewind stop).
inline constexpr const char* kRecorder = ".recorder";
} // namespace trace_files

struct TraceDirError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

std::filesystem::path traces_root();

// Creates a new trace directory (mode 0700, with files/): `output` if given
// (it must not exist, or be an empty directory), else ROOT/<program>-<n>.
std::filesystem::path create_trace_dir(const std::optional<std::filesystem::path>& output,
                                       const std::string& program_name);

// Points ROOT/latest at `trace` (atomically) when the trace is under ROOT.
void update_latest_link(const std::filesystem::path& trace);

// A trace argument: a path to a trace directory, a name under ROOT, or
// nothing / "latest" for the most recent one.
std::filesystem::path resolve_trace(const std::optional<std::string>& arg);

// The process recording into `trace`, if one still is (its .recorder file
// names it, with its start time, so a reused pid is not taken for it).
std::optional<pid_t> recorder_of(const std::filesystem::path& trace);
// Written by the recorder when it starts; removed when it ends.
void note_recorder(const std::filesystem::path& trace);
void forget_recorder(const std::filesystem::path& trace);

bool looks_like_trace(const std::filesystem::path& dir);
// Throws TraceDirError unless `dir` is a readable trace, saying which
// (permission denied, with the owner; or not a trace at all).
void require_trace(const std::filesystem::path& dir);

struct TraceListing {
    std::string name;
    std::filesystem::path path;
};
std::vector<TraceListing> list_traces();

} // namespace rw
