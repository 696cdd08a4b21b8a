#include "position_arg.h"

#include <algorithm>
#include <cctype>

#include "usage_error.h"

namespace rw::cli {

PositionArg PositionArg::parse(const std::string& text)
{
    PositionArg a;
    if (!text.empty() && text.back() == '%') {
        std::string digits = text.substr(0, text.size() - 1);
        if (digits.empty() || digits.size() > 3 ||
            !std::all_of(digits.begin(), digits.end(), [](unsigned char c) { return std::isdigit(c); }) ||
            std::stoul(digits) > 100)
            throw UsageError("'" + text + "' is not a percentage from 0% to 100%");
        a.percent = std::stoul(digits);
        return a;
    }
    auto pos = perfclock::Position::parse(text);
    if (!pos || pos->anchored())
        throw UsageError("'" + text + "' is not a position: give a percentage (90%), an event index (1234) or a " +
                         "position as `monitor when` prints it");
    a.position = *pos;
    return a;
}

uint64_t PositionArg::event_at_percent(uint64_t begin, uint64_t total_events, uint64_t percent)
{
    uint64_t total = std::max(total_events, begin + 1);
    return begin + (total - 1 - begin) * std::min<uint64_t>(percent, 100) / 100;
}

void PositionArg::check_within(uint64_t total_events) const
{
    if (!percent && position.event >= total_events)
        throw UsageError(describe() + " is past the recording's last event (" +
                         std::to_string(total_events ? total_events - 1 : 0) + ")");
}

std::string PositionArg::describe() const
{
    return percent ? std::to_string(*percent) + "%" : position.serialize();
}

} // namespace rw::cli
