// A position on the command line (`rewind landmark --at`, `--from`): a
// percentage of the recording ("90%"), an event index ("1234"), or an
// exact position as `monitor when` prints it ("38:b5555555551d0x3/s17").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "position.h"

namespace rw::cli {

struct PositionArg {
    std::optional<uint64_t> percent; // 0..100
    perfclock::Position position;    // when not a percentage

    // Throws UsageError naming the text.
    static PositionArg parse(const std::string& text);
    // The event boundary a percentage stands for, as `monitor goto PCT%`
    // computes it: the share of the events after the program's start.
    static uint64_t event_at_percent(uint64_t begin, uint64_t total_events, uint64_t percent);
    std::string describe() const;
    // Throws UsageError when it names an event past the recording's end.
    void check_within(uint64_t total_events) const;
};

} // namespace rw::cli
