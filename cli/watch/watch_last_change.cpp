// rewind watch for a value that comes and goes: EXPR has at the start the
// value it has at --at, and took others in between (a list that grows and
// empties again, a flag set and cleared). A bisection needs two different
// values at its ends; the change asked for is the last one before --at, so
// the search looks back from --at in growing steps until EXPR differs,
// over event boundaries first, then, where every boundary agrees with
// --at, inside the last stretch: over the writes to what EXPR reads, or in
// running time where gdb cannot watch it.
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "watch_positions.h"
#include "watch_search.h"

namespace rw::cli {
using namespace watch_text;
namespace {

// Writes counted looking back over them (each a debug exception, about
// 10 us here: a value flipped in a hot loop costs seconds, not a wrong
// answer).
constexpr uint64_t kMostWrites = 1 << 20;
// Time steps back from the end of a stretch start at this (alarms land 20
// to 100 us late: finer steps are not told apart).
constexpr double kFirstStepBack = 50e-6;

// Instructions stepped looking back over the end of a stretch (about
// 60 us each here).
constexpr uint64_t kMostTailSteps = 20000;

} // namespace

WatchSearch::Interval WatchSearch::latest_in_tail(Interval found, const std::string& end_segment)
{
    // Each level divides its interval by executions or writes, and the
    // piece after the last of them goes with the bad end: a value that
    // came and went again there (a list emptied by a loop, then refilled
    // and emptied by the code after it) is not seen by that level. Looking
    // back over the instructions from the end of the stretch finds it,
    // where they are few; each later change found moves the tail on.
    for (;;) {
        std::string end = with_segment(found.bad, end_segment);
        uint64_t n = 0;
        try {
            status("counting the instructions after " + found.bad);
            n = nlohmann::json::parse(
                    tool(fmt::format("rw-steps {} {} most={}", found.bad, end, kMostTailSteps)))["steps"]
                    .get<uint64_t>();
        } catch (const std::runtime_error&) {
            return found; // too many to step, or the end is not after it
        }
        auto at = [&](uint64_t j) {
            return j == 0 ? found.bad : j >= n ? end : with_segment(found.bad, "s" + std::to_string(j));
        };
        std::optional<uint64_t> good;
        uint64_t hi = n;
        for (uint64_t back = 1; back < n; back *= 2) {
            status(fmt::format("looking back over the last {} instructions of the stretch", back));
            if (!is_bad(probe(at(n - back)))) {
                good = n - back;
                break;
            }
            hi = n - back;
        }
        if (!good && n > 1 && !is_bad(probe(at(1))))
            good = 1;
        if (!good)
            return found;
        auto [lo, first_bad] = bisect(*good, hi, at, [&](uint64_t l, uint64_t h) {
            return fmt::format("instructions {}..{} of {} after {}", l, h, n, found.bad);
        });
        found = {at(lo), at(first_bad)};
    }
}

std::optional<uint64_t> WatchSearch::gallop_events_back(uint64_t begin, uint64_t bad_event, uint64_t& known_bad)
{
    // 1, 2, 4, … events before --at: the first boundary where EXPR differs
    // bounds the last change from below; the one probed just before it,
    // from above. log2(distance) probes, then as many to bisect.
    known_bad = bad_event;
    for (uint64_t back = 1; bad_event > begin; back *= 2) {
        uint64_t e = back >= bad_event - begin ? begin : bad_event - back;
        status(fmt::format("looking back from event {}: event {}", bad_event, e));
        if (!is_bad(probe(std::to_string(e))))
            return e;
        known_bad = e;
        if (e == begin)
            break;
    }
    return std::nullopt;
}

std::optional<WatchSearch::Interval> WatchSearch::last_change_inside(uint64_t begin, const std::string& bad_position,
                                                                     uint64_t& looked)
{
    // Each stretch costs a run of it (a count of the writes to what EXPR
    // reads; a few where EXPR calls functions and is sampled in time),
    // about one replay of the stretches looked at in all: the nearest ones;
    // farther back, boundaries.
    constexpr uint64_t kMostStretches = 512;
    uint64_t e = event_of(bad_position);
    std::optional<std::string> end, later_end; // where the thread arrives at event e, at event e + 1
    if (bad_position.find(':') != std::string::npos)
        end = bad_position;
    for (looked = 0; looked < kMostStretches;) {
        if (end) {
            Interval stretch{std::to_string(e), *end};
            status(fmt::format("looking inside the stretch {} .. {}", stretch.good, stretch.bad));
            // The thread did not write what EXPR reads here: EXPR kept its
            // value, unless another thread, process or the kernel changed
            // it (the boundaries farther back find those).
            bool quiet = false;
            std::optional<Interval> found = last_change_at_writes(stretch, &quiet);
            // (A syscall's results are the kernel's writes, which the count
            // does not see: the event after the stretch is looked at too.)
            if (!found && quiet && looked > 0 && event_writes_to(e, pieces_for(stretch)))
                quiet = false;
            if (!found && !quiet && looked > 0 && !is_bad(probe(*end))) {
                // Good before event e runs, bad where the thread arrives at
                // the next one: the event did it, or something in the
                // stretch after it that the thread did not write.
                Interval after{std::to_string(e + 1), *later_end};
                if (is_bad(probe(after.good)))
                    return Interval{*end, after.good};
                found = search_stretch(after);
                stretch = after;
            }
            if (!found && !quiet)
                found = last_change_in_time(stretch);
            if (found)
                return latest_in_tail(*found, last_segment(stretch.bad));
        }
        looked++;
        if (e <= begin)
            break;
        later_end = end;
        end = stretch_end(std::to_string(--e));
        if (!later_end)
            end.reset(); // (another thread's event: no stretch of ours to compare it with)
    }
    return std::nullopt;
}

bool WatchSearch::event_writes_to(uint64_t event, const Pieces& pieces)
{
    auto j = nlohmann::json::parse(tool(fmt::format("rw-event {}", event)));
    for (const auto& w : j.value("writes", nlohmann::json::array())) {
        uint64_t addr = w[0].get<uint64_t>(), len = w[1].get<uint64_t>();
        for (const Piece& p : pieces)
            if (addr < p.addr + p.len && p.addr < addr + len)
                return true;
    }
    return false;
}

std::optional<WatchSearch::Interval> WatchSearch::last_change_at_writes(const Interval& in, bool* quiet)
{
    Pieces pieces = pieces_for(in);
    if (pieces.empty())
        return std::nullopt;
    auto counts = count_writes(in, pieces, kMostWrites);
    if (!counts || counts->empty())
        return std::nullopt;
    size_t which = static_cast<size_t>(std::max_element(counts->begin(), counts->end()) - counts->begin());
    const Piece& piece = pieces[which];
    uint64_t c = (*counts)[which];
    if (quiet)
        *quiet = c == 0;
    if (c == 0)
        return std::nullopt;
    std::string segment = fmt::format("w{}.{}.1x", addr_text(piece.addr), piece.len);
    // P(0) = the stretch's start (bad, as its end), P(k) right after the k-th write.
    auto at = [&](uint64_t k) { return k == 0 ? in.good : with_segment(in.good, segment + std::to_string(k)); };
    auto progress = [&](uint64_t l, uint64_t h) {
        return fmt::format("looking back over writes {}..{} of {} to {:#x}", l, h, c, piece.addr);
    };
    if (!is_bad(probe(at(c))))
        return std::nullopt; // the writes it watches do not leave the end's value
    uint64_t lo = 0, hi = c;
    for (uint64_t back = 1; back < c; back *= 2) {
        status(progress(c - back, c));
        if (!is_bad(probe(at(c - back)))) {
            lo = c - back;
            break;
        }
        hi = c - back;
    }
    if (lo == 0 && hi > 1 && !is_bad(probe(at(1))))
        lo = 1; // (the doubling stepped over the first write)
    if (lo == 0 && is_bad(probe(at(0)))) {
        if (quiet)
            *quiet = true; // every write the doubling looked at left the end's value
        return std::nullopt;
    }
    std::tie(lo, hi) = bisect(lo, hi, at, progress);
    // The hi-th write made the change: from the instruction before it.
    if (std::optional<std::string> before = instruction_before(at(hi)); before && !is_bad(probe(*before)))
        return Interval{*before, at(hi)};
    return search_stretch({at(lo), with_segment(at(lo), segment + "1")});
}

std::optional<WatchSearch::Interval> WatchSearch::last_change_in_time(const Interval& in)
{
    // Where gdb cannot watch EXPR (it calls functions): anchors sampled
    // 50 us, 100 us, 200 us, … of running time before the stretch's end,
    // until one sees another value.
    std::string b = last_segment(in.bad);
    if (!portable_end(b))
        return std::nullopt;
    double seconds = running_time(in.good, in.bad);
    std::vector<Frame> live = live_across(in);
    std::optional<std::string> bad_anchor;
    for (double back = kFirstStepBack; back < seconds; back *= 2) {
        double aim = seconds - back;
        status(fmt::format("looking back {:.0f} us from the end of {} .. {}", back * 1e6, in.good, in.bad));
        hold({in.good, in.bad});
        auto reply =
            nlohmann::json::parse(tool(fmt::format("rw-sample {} 1 {}", in.good, static_cast<uint64_t>(aim * 2e6))));
        auto anchors = reply["anchors"].get<std::vector<std::string>>();
        if (anchors.empty())
            continue; // the alarm came after the end: further back
        std::string settled = settle(anchors[0], live);
        if (is_bad(probe(settled))) {
            bad_anchor = settled;
            continue;
        }
        // Between this good anchor and the end: over the writes from
        // here (fewer), else the closest bad anchor (named from here as an
        // instruction and a count), else the stretch's end.
        Interval rest{settled, with_segment(settled, b)};
        if (auto found = last_change_at_writes(rest))
            return found;
        if (bad_anchor) {
            try {
                rest.bad = nlohmann::json::parse(tool("rw-label " + settled + " " + *bad_anchor))["position"]
                               .get<std::string>();
            } catch (const std::runtime_error&) {
            }
        }
        return search_stretch(rest);
    }
    // No sample saw another value; the stretch's start may have.
    if (!is_bad(probe(in.good)))
        return search_stretch(in);
    return std::nullopt;
}

} // namespace rw::cli
