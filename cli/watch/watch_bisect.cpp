// rewind watch's bisections over counted things (event boundaries,
// writes, executions of an instruction, single steps): where the change
// lies between two counts, with the variants each level needs.
#include <fmt/core.h>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "watch_positions.h"
#include "watch_search.h"

namespace rw::cli {
using namespace watch_text;

std::pair<uint64_t, uint64_t> WatchSearch::bisect(uint64_t lo, uint64_t hi,
                                                  const std::function<std::string(uint64_t)>& at,
                                                  const std::function<std::string(uint64_t, uint64_t)>& progress,
                                                  const std::function<uint64_t(uint64_t, uint64_t)>& split)
{
    if (latest_first_ && hi - lo > 2) {
        // The last change, for a value that comes and goes: hi - 1, hi - 2,
        // hi - 4, … until one is good, then bisect the last doubling.
        uint64_t top = hi;
        for (uint64_t back = 1; back < top - lo; back *= 2) {
            status(progress(lo, hi));
            if (!is_bad(probe(at(top - back)))) {
                lo = top - back;
                break;
            }
            hi = top - back;
        }
    }
    while (hi - lo > 1) {
        uint64_t mid = split ? std::clamp(split(lo, hi), lo + 1, hi - 1) : lo + (hi - lo) / 2;
        status(progress(lo, hi));
        if (is_bad(probe(at(mid))))
            hi = mid;
        else
            lo = mid;
    }
    return {lo, hi};
}

std::pair<uint64_t, uint64_t>
WatchSearch::bisect_executions(uint64_t lo, uint64_t hi, const std::function<std::string(uint64_t)>& at,
                               const std::function<std::string(uint64_t, uint64_t)>& progress)
{
    // The executions counted here (where calls return, loop heads, the
    // instruction an anchor stopped at) come in runs: a loop's rounds, the
    // levels of a recursion, the calls of one pass. The change is more often
    // before or after a whole run than inside it: on the program shapes of
    // bench/, 5 of 7 such bisections ended next to one end, each after
    // log2(count) probes (22 on one search). Trying both ends first costs
    // two probes where the change is inside, and saves all but one or two
    // where it is not.
    constexpr uint64_t kEndsFirst = 8; // fewer: the bisection is short anyway
    if (hi - lo >= kEndsFirst && !latest_first_) {
        status(progress(lo, hi));
        if (is_bad(probe(at(lo + 1))))
            return {lo, lo + 1};
        lo++;
        status(progress(lo, hi));
        if (!is_bad(probe(at(hi - 1))))
            return {hi - 1, hi};
        hi--;
    }
    return bisect(lo, hi, at, progress);
}

WatchSearch::Interval WatchSearch::gallop(const std::string& good, uint64_t y, const std::string& bad, uint64_t first)
{
    // P(k) = the k-th execution of y after `good`. Probing k = 1, 2, 4, …
    // from the snapshot of the last probe costs about twice the executions
    // up to the change, however far it is; then bisect the last doubling.
    auto at = [&](uint64_t k) {
        return k == 0 ? good : with_segment(good, "b" + addr_text(y) + "x" + std::to_string(k));
    };
    uint64_t lo = 0, hi = std::max<uint64_t>(first, 1);
    for (;; hi *= 2) {
        status(fmt::format("galloping over executions of {:#x}: {}", y, hi));
        bool bad_here;
        try {
            bad_here = is_bad(probe(at(hi)));
        } catch (const std::runtime_error&) {
            // y runs fewer than hi times before the event: the change is
            // between its last good execution and the portable bad end.
            std::string from = at(lo);
            return {from, lo == 0 ? bad : with_segment(from, last_segment(bad))};
        }
        if (bad_here)
            break;
        lo = hi;
    }
    auto progress = [&](uint64_t l, uint64_t h) { return fmt::format("executions {}..{} of {:#x}", l, h, y); };
    // Bad at the first try: the change is among the executions from the
    // good end, which run as any others do (both ends first). Past a
    // doubling, it lies in the last one's second half.
    std::tie(lo, hi) = lo == 0 ? bisect_executions(lo, hi, at, progress) : bisect(lo, hi, at, progress);
    return {at(lo), with_segment(at(lo), "b" + addr_text(y) + "x1")};
}

} // namespace rw::cli
