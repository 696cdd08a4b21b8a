// rewind watch's event level: event boundaries, the landmarks a replay
// reaches cheaply, bisected in recorded time (see WatchSearch).
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "watch_positions.h"
#include "watch_search.h"

namespace rw::cli {
using namespace watch_text;

void WatchSearch::walk_to(uint64_t begin, uint64_t event)
{
    // The replay to the end is the first pass through the recording, and
    // the bisection over events the second: its first probe, in the
    // middle, would replay half the recording again from the last
    // snapshot before it, and so on down. Stopping at evenly spaced events
    // on the way (the server keeps a snapshot where it stops) makes the
    // second pass a sixteenth of one. Worth it only where events are many:
    // each is a ptrace round trip.
    constexpr uint64_t kMarks = 16, kFewEvents = 2000;
    if (event <= begin || event - begin < kFewEvents)
        return;
    for (uint64_t k = 1; k < kMarks; k++) {
        uint64_t mark = begin + (event - begin) * k / kMarks;
        status(fmt::format("replaying to event {} of {}", mark, event));
        go(std::to_string(mark));
        marks_.push_back(mark);
    }
}

std::optional<uint64_t> WatchSearch::event_at(const std::string& spec, uint64_t begin, uint64_t end_event)
{
    try {
        size_t used = 0;
        uint64_t n = std::stoull(spec, &used);
        if (used == spec.size())
            return n >= begin && n <= end_event ? std::optional(n) : std::nullopt;
        if (used + 1 == spec.size() && spec.back() == '%' && n <= 100)
            return begin + (end_event - begin) * n / 100;
    } catch (const std::logic_error&) {
    }
    return std::nullopt;
}

WatchSearch::Interval WatchSearch::search_events(uint64_t good_event, const std::string& bad, uint64_t bad_event,
                                                 uint64_t known_bad)
{
    uint64_t lo = good_event, hi = std::min(bad_event, known_bad);
    if (hi == bad_event && bad.find(':') != std::string::npos) {
        // The bad position is inside a stretch: is its boundary already bad?
        if (bad_event == good_event || !is_bad(probe(std::to_string(bad_event))))
            return {std::to_string(bad_event), bad};
    }
    std::tie(lo, hi) = bisect(
        lo, hi, [](uint64_t k) { return std::to_string(k); },
        [](uint64_t l, uint64_t h) { return fmt::format("events {}..{}", l, h); },
        [this](uint64_t l, uint64_t h) { return time_split(l, h); });
    return {std::to_string(lo), std::to_string(hi)};
}

uint64_t WatchSearch::time_split(uint64_t l, uint64_t h, bool* by_time, double* share)
{
    // Split where the recorded time is halved, not the event count: a probe
    // then halves the program's running time, where the change is as likely
    // as anywhere, instead of its events (rw-split does not move the replay).
    // A mark of the first pass near that split is taken instead: the
    // server kept a snapshot there, so probing it replays nothing. Near
    // enough (a quarter of the range) that the halving costs no probes.
    std::string here = here_;
    auto reply = nlohmann::json::parse(tool(fmt::format("rw-split {} {}", l, h)));
    here_ = here;
    auto split = reply["event"].get<uint64_t>();
    if (by_time)
        *by_time = reply.value("by_time", false);
    if (share)
        *share = reply.value("share", 0.5);
    auto distance = [split](uint64_t m) { return m > split ? m - split : split - m; };
    uint64_t best = split;
    for (uint64_t m : marks_)
        if (m > l && m < h && distance(m) <= (h - l) / 4 && (best == split || distance(m) < distance(best)))
            best = m;
    return best;
}

std::vector<uint64_t> WatchSearch::looking_back(uint64_t begin, uint64_t end)
{
    // (Where the recorded times no longer tell the boundaries apart, as in
    // the events after a computation that ends in a burst of syscalls, the
    // split is the middle event: a probe there says nothing about time.)
    // Each point leaves half the time before the end that the one before
    // it left; once the time left is an eighth or less, a later point
    // would be a probe at nearly the same time (a boundary after a long
    // computation is near the end in time, whatever its index).
    std::vector<uint64_t> out; // nearest the end first
    bool by_time = true;
    double left = 1.0; // of the recorded time, after the latest point
    for (uint64_t lo = begin; left > 1.0 / 8 && end - lo >= 2;) {
        double share = 0.5;
        lo = time_split(lo, end, &by_time, &share);
        if (!by_time)
            break;
        out.insert(out.begin(), lo);
        left *= 1 - share;
    }
    return out;
}

} // namespace rw::cli
