#include "packet_fields.h"

namespace rw::replay {
namespace {

int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

uint64_t packet_hex_number(std::string_view field, std::string_view what, uint64_t max)
{
    uint64_t value = 0;
    for (char c : field) {
        int d = hex_digit(c);
        if (d < 0)
            throw MalformedPacket(std::string(what) + " is not a hex number");
        if (value > (max - static_cast<uint64_t>(d)) / 16)
            throw MalformedPacket(std::string(what) + " is out of range");
        value = value * 16 + static_cast<uint64_t>(d);
    }
    return value;
}

std::string packet_hex_bytes(std::string_view hex, std::string_view what)
{
    if (hex.size() % 2 != 0)
        throw MalformedPacket(std::string(what) + " has an odd number of hex digits");
    std::string out;
    out.reserve(hex.size() / 2);
    for (size_t i = 0; i < hex.size(); i += 2) {
        int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0)
            throw MalformedPacket(std::string(what) + " is not hex bytes");
        out.push_back(static_cast<char>(hi * 16 + lo));
    }
    return out;
}

} // namespace rw::replay
