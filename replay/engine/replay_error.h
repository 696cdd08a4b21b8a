// Why a replay stopped before the end of its trace. Replay never continues
// silently past any of these.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "event.h"

namespace rw::replay {

enum class ReplayErrorKind {
    Divergence, // the program did something other than what was recorded
    Refused,    // the trace holds something replay cannot reproduce
    TraceEnded, // the trace stops here (truncated, corrupt, unfinished)
    Stuck,      // a task made no progress for too long
    Damaged,    // a part of the trace is altered or unreadable (a file copy, a name)
};

// Process exit status of `rewind replay` for each kind (documented in docs/commands.md).
int exit_status_for(ReplayErrorKind kind);

class ReplayError : public std::runtime_error {
public:
    ReplayError(ReplayErrorKind kind, uint64_t event_index, Tid tid, std::string what, std::string details = {});

    ReplayErrorKind kind() const { return kind_; }
    uint64_t event_index() const { return event_index_; }
    Tid tid() const { return tid_; }
    const std::string& summary() const { return what_; }
    const std::string& details() const { return details_; }
    // The full report for the user.
    std::string report() const;

private:
    ReplayErrorKind kind_;
    uint64_t event_index_;
    Tid tid_;
    std::string what_;
    std::string details_;
};

} // namespace rw::replay
