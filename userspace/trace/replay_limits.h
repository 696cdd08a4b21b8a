// What replay cannot reproduce, decided from the trace alone. One place
// for it, so that `rewind info` says beforehand exactly where a replay
// will stop, and the replay stops there with the same reason.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "event.h"

namespace rw {

// Why replay must stop at this event; nullopt if it can replay it.
std::optional<std::string> replay_limit(const Event& event);
std::optional<std::string> replay_limit(const SyscallEvent& event);

// System V segments the recording made: replay makes its own for each
// and attaches them where the recording did; a segment the recording only
// looked up (by its key) may have held anything when the recording began,
// and its attach cannot be replayed. Fed every event in order, as replay
// meets them.
class RecordedSegments {
public:
    // Notes the segment a successful shmget made (IPC_PRIVATE, or
    // IPC_CREAT with IPC_EXCL); true if it made one.
    bool note(const SyscallEvent& e);
    // Why this successful shmat cannot be replayed, if it cannot.
    std::optional<std::string> attach_limit(const SyscallEvent& e) const;

private:
    std::set<int64_t> made_;
};

// The call returned an error: it changed nothing, whatever it is.
bool failed(const SyscallEvent& e);

// What a replay of a trace recorded with --parallel cannot promise, in one
// line: said by `rewind info`, at the start of a debugging session and in
// `rewind watch`'s report on such a trace ("" for any other trace).
std::string parallel_replay_limit(const std::string& thread_mode);

// Auxiliary vector entries that carry the process's credentials.
bool is_credential_aux(uint64_t key);

} // namespace rw
