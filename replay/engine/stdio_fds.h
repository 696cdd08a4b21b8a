// Which of a process's descriptors still lead to the replayer's own stdin,
// stdout or stderr, so replay re-emits exactly the output the user saw
// (a pipeline stage's fd 1 is a pipe, not the terminal).
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "event.h"
#include "rewind_abi.h"

namespace rw::replay {

class StdioFds {
public:
    // Descriptors 0, 1, 2 lead to the standard streams.
    static StdioFds inherited();

    // 0, 1 or 2 for a descriptor leading to that stream, else -1.
    int stream_of(uint64_t fd) const;
    // Follows a completed syscall's effect on the descriptor table.
    void apply(const SyscallEvent& e);
    // The recorded process a descriptor from pidfd_open refers to.
    std::optional<int64_t> process_of_pidfd(uint64_t fd) const;
    // `fd` is a copy of a descriptor that leads to `stream` (-1: none), from
    // another process (pidfd_getfd).
    void copied_from_process(uint64_t fd, int stream);

    // Descriptor -> stream, for saving the table with a landmark.
    const std::map<int, int>& streams() const { return streams_; }
    static StdioFds from_streams(std::map<int, int> streams)
    {
        StdioFds f;
        f.streams_ = std::move(streams);
        return f;
    }

private:
    std::map<int, int> streams_;    // descriptor -> stream
    std::map<int, int64_t> pidfds_; // descriptor -> the process pidfd_open named
};

} // namespace rw::replay
