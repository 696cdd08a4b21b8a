// The libc synchronization functions that rewind record --parallel puts in
// one global order (enum rw_sync_fn in rewind_abi.h): their symbol names,
// and where their events stand.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "rewind_abi.h"

namespace rw {

struct SyncCall {
    uint32_t fn;             // enum rw_sync_fn
    std::string_view symbol; // exported by libc.so.6 (glibc 2.34 and later hold libpthread)
    bool releases;           // an event at entry
    bool acquires;           // an event at return
};

std::span<const SyncCall> all_sync_calls();
// nullptr for a number the table does not know (a newer trace).
const SyncCall* find_sync_call(uint32_t fn);
std::string_view sync_call_name(uint32_t fn);

} // namespace rw
