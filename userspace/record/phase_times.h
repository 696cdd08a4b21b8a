// Where the time of a pause goes, phase by phase, for REWIND_RECORD_STATS:
// "stop 0.4 ms, events 212.6 ms, …".
#pragma once

#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace rw {

class PhaseTimes {
public:
    using Clock = std::chrono::steady_clock;
    explicit PhaseTimes(Clock::time_point start = Clock::now()) : last_(start) {}

    // The phase that ends now.
    void ended(const char* name)
    {
        auto now = Clock::now();
        phases_.push_back({name, std::chrono::duration<double, std::milli>(now - last_).count()});
        last_ = now;
    }
    std::string describe() const
    {
        std::string out;
        char one[96];
        for (const auto& [name, ms] : phases_) {
            std::snprintf(one, sizeof one, "%s%s %.1f ms", out.empty() ? "" : ", ", name, ms);
            out += one;
        }
        return out;
    }

private:
    Clock::time_point last_;
    std::vector<std::pair<const char*, double>> phases_;
};

} // namespace rw
