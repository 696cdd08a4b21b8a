// The fields of a packet from gdb, parsed strictly. A packet is input from
// whoever reaches the server: a field that is not what the protocol says
// (a hex number too large, "zz" for hex bytes) is reported as a malformed
// packet, which the server answers with an error reply and a note, not
// with a library's exception text.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rw::replay {

struct MalformedPacket : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A hex number (as the protocol writes addresses, lengths, descriptors),
// at most `max`; "" is 0. `what` names the field in the message.
uint64_t packet_hex_number(std::string_view field, std::string_view what, uint64_t max = UINT64_MAX);
// Bytes written as pairs of hex digits.
std::string packet_hex_bytes(std::string_view hex, std::string_view what);

} // namespace rw::replay
