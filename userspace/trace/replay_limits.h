// What replay cannot reproduce, decided from the trace alone. One place
// for it, so that `rewind info` says beforehand exactly where a replay
// will stop, and the replay stops there with the same reason.
#pragma once

#include <optional>
#include <string>

#include "event.h"

namespace rw {

// Why replay must stop at this event; nullopt if it can replay it.
std::optional<std::string> replay_limit(const Event& event);
std::optional<std::string> replay_limit(const SyscallEvent& event);

// The call returned an error: it changed nothing, whatever it is.
bool failed(const SyscallEvent& e);

// What a replay of a trace recorded with --parallel cannot promise, in one
// line: said by `rewind info`, at the start of a debugging session and in
// `rewind watch`'s report on such a trace ("" for any other trace).
std::string parallel_replay_limit(const std::string& thread_mode);

// Auxiliary vector entries that carry the process's credentials.
bool is_credential_aux(uint64_t key);

} // namespace rw
