// Positions as the replay server writes them ("EVENT" or "EVENT:seg/seg…"),
// handled as text by rewind watch (watch_search.cpp, watch_anchors.cpp).
#pragma once

#include <fmt/core.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace rw::cli::watch_text {

inline std::string with_segment(const std::string& position, const std::string& segment)
{
    return position + (position.find(':') == std::string::npos ? ":" : "/") + segment;
}

inline uint64_t event_of(const std::string& position)
{
    return std::stoull(position.substr(0, position.find(':')));
}

// The last segment of a position ("" for a boundary).
inline std::string last_segment(const std::string& position)
{
    size_t cut = position.find_last_of(":/");
    return cut == std::string::npos ? "" : position.substr(cut + 1);
}

// A last segment that means the same from any earlier point of its
// stretch: the stretch's event, the first execution of an instruction
// ("b<addr>x1"), and with `writes`, the first write to a place
// ("w<addr>.<len>.1x1").
inline bool portable_end(const std::string& segment, bool writes = false)
{
    unsigned long long addr = 0, n = 0;
    unsigned len = 0, access = 0;
    return segment == "e" || (std::sscanf(segment.c_str(), "b%llxx%llu", &addr, &n) == 2 && n == 1) ||
           (writes && std::sscanf(segment.c_str(), "w%llx.%u.%ux%llu", &addr, &len, &access, &n) == 4 && access == 1 &&
            n == 1);
}

// An address as positions and the rw-* commands spell it: bare hexadecimal.
inline std::string addr_text(uint64_t v)
{
    return fmt::format("{:x}", v);
}

} // namespace rw::cli::watch_text
