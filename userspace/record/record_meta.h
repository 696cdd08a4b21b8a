// What a trace's meta.json says when the recording starts: of the program
// rewind starts, or of processes that ran before rewind came (rewind
// record --pid), read from /proc as a launched recording knows it from its
// command line.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "recorder.h"
#include "trace_meta.h"

namespace rw {

// The meta of a recording of `program` started with `argv` and `envp`.
TraceMeta make_meta(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& envp, uint32_t ring_bytes);
// The meta of a recording of running process `pid`: its program, command
// line, environment (scrubbed as told), directory, ids and limits, and its
// `attached` entry (the start image's threads and mappings still to fill).
TraceMeta meta_of_running(pid_t pid, const RecordOptions& options);
// A process below it attached with it (--tree), child of `parent`.
TraceMeta::Attached::Process running_process(pid_t pid, pid_t parent);

} // namespace rw
