// Binary encoding of events (trace format v1, see docs/trace-format.md).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "bytes.h"
#include "event.h"

namespace rw {

// Appends one encoded event.
void encode_event(const Event& event, std::vector<uint8_t>& out);

// Decodes one event; throws FormatError on malformed input.
Event decode_event(ByteReader& in);
// The same into `out`, reusing the storage it has (a syscall's memory ranges).
void decode_event(ByteReader& in, Event& out);

} // namespace rw
