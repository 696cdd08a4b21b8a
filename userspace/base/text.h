// Small text helpers shared by the trace display, the replayer's messages
// and the gdb remote protocol.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace rw {

// 0x-prefixed hexadecimal, as the trace display and replay errors show addresses.
inline std::string hex(uint64_t v)
{
    return fmt::format("{:#x}", v);
}

// Bytes as two lowercase hex digits each, no separator (the gdb protocol's
// and the tool replies' form).
inline std::string hex_bytes(std::span<const uint8_t> bytes)
{
    static const char digits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * bytes.size());
    for (uint8_t b : bytes) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 15]);
    }
    return out;
}

// The bytes of a hex_bytes() string (an odd last digit is ignored, a
// character that is not a hex digit reads as 0).
inline std::vector<uint8_t> bytes_from_hex(std::string_view hex)
{
    auto digit = [](char c) -> uint8_t {
        return c >= '0' && c <= '9'   ? c - '0'
               : c >= 'a' && c <= 'f' ? c - 'a' + 10
               : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                      : 0;
    };
    std::vector<uint8_t> out;
    out.reserve(hex.size() / 2);
    for (size_t i = 0; i + 1 < hex.size(); i += 2)
        out.push_back(static_cast<uint8_t>(digit(hex[i]) << 4 | digit(hex[i + 1])));
    return out;
}

// The fields of `s` between separators; an empty string gives one empty field.
inline std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t end = s.find(sep, start);
        out.push_back(s.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos)
            return out;
        start = end + 1;
    }
}

} // namespace rw
