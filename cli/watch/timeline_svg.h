// A recording drawn as a vertical timeline (events to scale, the latest at
// the bottom), one lane per thread, with labelled dots at positions: the
// picture behind `rewind origin --svg` and `rewind watch --svg`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rw::cli {

class TimelineSvg {
public:
    TimelineSvg(std::string title, uint64_t total_events, std::vector<std::string> lanes);
    // A dot at `position` (its event places it) in lane `lane`, with a
    // tooltip (the position) and a label at the right. Dots of one event
    // are spread a little, in the order they are added.
    void dot(size_t lane, const std::string& position, const std::string& colour, const std::string& label);
    // Joins the dots in the order they were added.
    void connect(const std::string& colour) { connect_ = colour; }
    std::string str() const;

private:
    struct Dot {
        size_t lane;
        std::string position;
        std::string colour, label;
        int y;
    };
    int lane_x(size_t lane) const;
    std::string title_;
    uint64_t total_;
    std::vector<std::string> lanes_;
    std::vector<Dot> dots_;
    std::vector<std::pair<uint64_t, int>> per_event_; // event, dots so far
    std::string connect_;
};

std::string svg_escaped(const std::string& s);

} // namespace rw::cli
