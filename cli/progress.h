// A progress line on stderr while a long replay runs.
#pragma once

#include <fmt/core.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

#include "steady_now.h"

namespace rw::cli {

// A progress line on stderr, for replays that take more than a moment.
class Progress {
public:
    explicit Progress(uint64_t total) : total_(total), start_(steady_now()) {}
    void update(uint64_t event)
    {
        if (!isatty(STDERR_FILENO) || steady_now() - start_ < std::chrono::seconds(2))
            return;
        if (total_)
            fmt::print(stderr, "\rrewind: replaying event {} of {} ({}%)  ", event, total_, event * 100 / total_);
        else
            fmt::print(stderr, "\rrewind: replaying event {}  ", event);
        shown_ = true;
    }
    // Takes the line away (before other output; the next update shows it again).
    void clear()
    {
        if (shown_)
            fmt::print(stderr, "\r\033[K");
        shown_ = false;
    }
    ~Progress() { clear(); }

private:
    uint64_t total_;
    std::chrono::steady_clock::time_point start_;
    bool shown_ = false;
};

} // namespace rw::cli
