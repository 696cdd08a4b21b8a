// Small text helpers shared by the trace display, the replayer's messages
// and the gdb remote protocol.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace rw {

// 0x-prefixed hexadecimal, as the trace display and replay errors show addresses.
inline std::string hex(uint64_t v)
{
    return fmt::format("{:#x}", v);
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
