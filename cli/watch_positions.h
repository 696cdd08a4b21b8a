// Positions as the replay server writes them ("EVENT" or "EVENT:seg/seg…"),
// handled as text by rewind watch (watch_search.cpp, watch_anchors.cpp).
#pragma once

#include <fmt/core.h>

#include <cstdint>
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

// An address as positions and the rw-* commands spell it: bare hexadecimal.
inline std::string addr_text(uint64_t v)
{
    return fmt::format("{:x}", v);
}

} // namespace rw::cli::watch_text
