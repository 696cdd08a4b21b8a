// Human-readable and JSON renderings of events (`rewind dump`), driven by
// the syscall table's argument formats.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "event.h"

namespace rw {

struct FormatOptions {
    int64_t bytes = 48; // memory bytes shown per range; -1 for all
};

std::string format_event(uint64_t index, const Event& event, const FormatOptions& options);
nlohmann::json event_to_json(uint64_t index, const Event& event, const FormatOptions& options);

// "read(3, 0x7ffd…, 4096) = 832"
std::string format_syscall_call(const SyscallEvent& e);
std::string format_return(int nr, int64_t ret);
std::string escape_bytes(const uint8_t* data, size_t size, size_t limit);
// The errno the program saw from a failed syscall; 0 for any other event,
// a success, or a call a signal interrupted and the kernel restarts
// (ERESTARTSYS and its kin are never seen by the program).
int failed_errno(const Event& event);

} // namespace rw
