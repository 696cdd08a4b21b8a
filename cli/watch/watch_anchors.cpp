// rewind watch's time level: a stretch bisected in the thread's running
// time, with snapshots ("anchors") where alarms stop it (see WatchSearch).
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

WatchSearch::Interval WatchSearch::search_anchors(Interval in)
{
    // A bad end that means the same from any earlier point of its stretch:
    // the first execution of an instruction, or the stretch's event.
    std::string b = last_segment(in.bad);
    if (!portable_end(b))
        return in;
    // An alarm on the thread's running time lands 20 to 100 us late: finer
    // spans are not told apart (the counted levels take over there).
    constexpr double kFinest = 50e-6;
    // Below this, samples gain less than a bit each: a run restored from a
    // snapshot spends its first tens of microseconds copying the pages it
    // writes, so no alarm lands early in it (a 134 us stretch: anchors aimed
    // at 23 and 67 us both landed near 90, and naming one from the other
    // counted 27,000 executions). Counting divides such a stretch instead.
    constexpr double kCountable = 4 * kFinest;
    double seconds = running_time(in.good, in.bad);
    if (seconds < kCountable)
        return in;
    auto relative_bad = [&](const std::string& from) { return with_segment(from, b); };

    // Bisection in running time: run from the good end for half the time
    // the interval takes and snapshot there (an anchor). One snapshot per
    // run: right after a fork every page the program writes is copied on
    // its first write, which would slow the rest of a run with many.
    std::string good = in.good;
    std::vector<std::string> goods{good}; // each sampled from the one before
    std::optional<std::string> bad_anchor;
    std::vector<Frame> live = live_across(in);
    // Running time after a restore is not the recording's: the pages a run
    // writes are copied on first write, so an interrupt lands short of the
    // time planned. Measure what is left when the plan says it is small.
    auto name_bad = [&]() -> Interval {
        // Name the bad anchor from the good end: an instruction and its
        // execution count. Interrupts arrive late by varying amounts, so a
        // good anchor sampled after the bad one may lie beyond it; the good
        // end it was itself sampled from does not. A settled anchor is
        // named by where it settled (a return into the outermost function),
        // which runs far less often than where the interrupt stopped.
        status("naming " + *bad_anchor);
        unsigned long long beyond = 1; // executions known to come before the bad anchor
        for (auto g = goods.rbegin(); g != goods.rend(); ++g) {
            std::string named;
            try {
                named =
                    nlohmann::json::parse(tool("rw-label " + *g + " " + *bad_anchor))["position"].get<std::string>();
            } catch (const std::runtime_error& e) {
                std::string why = e.what();
                size_t at = why.find("ran more than ");
                if (g == goods.rbegin() && at != std::string::npos)
                    std::sscanf(why.c_str() + at, "ran more than %llu", &beyond);
                if (why.find("counting stopped") != std::string::npos)
                    break; // too far to count; an earlier good end is farther still
                continue;  // after the bad anchor
            }
            goods.erase(g.base(), goods.end());
            return {*g, named};
        }
        // Counted by int3s, the bad anchor is too many executions of its
        // instruction away to name. Those executions still divide the
        // stretch: gallop over them from the last good anchor.
        std::vector<Frame> at = frames_at(*bad_anchor);
        bad_anchor.reset();
        // The writes to what EXPR reads may be few from there. (From the
        // good end itself, the stretch is as long as it was.)
        if (goods.back() != in.good && (found_at_write_ = search_writes({goods.back(), relative_bad(goods.back())})))
            return *found_at_write_;
        if (at.empty())
            return {goods.back(), relative_bad(goods.back())};
        // (The executions the naming went through all come before the bad
        // anchor: the gallop starts there, not at 1, saving about log2 of
        // them in probes.)
        return gallop(goods.back(), at.front().pc, relative_bad(goods.back()), beyond);
    };
    double span = seconds;
    Interval left = in, previous = in;
    constexpr int kRounds = 3;
    // A round that ends above this has stalled (its anchors kept landing
    // late): another round, from the good anchor towards the named bad
    // end, may get closer. Below it, counting costs less than sampling.
    constexpr double kRoundAgain = 1e-3;
    // Below this much left to the bad end, a good anchor does not become the
    // base: runs from one base cost at most this, and their times compare.
    constexpr double kKeepBase = 20e-3;
    // Where the bad anchor turned out to be from the last new base, in
    // widths of the interval when the base changed: runs restored from a
    // new base are slower by the pages they copy first, by a factor the
    // program's writes set (0.3 to 0.6 widths on most shapes, 3 and more
    // where the program writes all over its heap: the copies cost 1 to 4 ms
    // whatever the width). The first sample from the next new base aims that
    // far, and a quarter more (at most 8 widths).
    double expected_widths = 1.25;
    for (int round = 0; round < kRounds; round++) {
        int stalls = 0;
        std::optional<double> rebased_width; // the width at the last change of base
        int goods_under_estimate = 0;        // good samples in a row under Bound::Estimated
        double since_rebase = 0;             // the base's time from the base before that change
        // Times are the thread's running time from `base`, the good end the
        // samples start from. Until an anchor is bad, each good anchor
        // becomes the base, and the time left to the bad end is measured
        // from it. Once one is bad, the base stays where that anchor was
        // sampled from, and samples aim between the latest good anchor's
        // time and the bad one's. Chained from each new good anchor
        // instead, the plan drifted: a run restored from a snapshot copies
        // each page it writes first, so its time overstates its progress,
        // and the overstatements add up (on the costly-expression shape,
        // twelve good anchors planned to end 0.1 ms short of the bad one
        // ended 16 million loop rounds short of it). But runs from one base
        // vary too, by a few percent of their length (15 ms runs landed
        // 0.4 ms apart for the same plan): once the interval is narrower
        // than an eighth of its start's time, the latest good anchor
        // becomes the base, and a run a little longer than the interval's
        // width from there looks for a bad anchor close to it (doubling
        // while it finds none).
        std::string base = good;
        double lo_t = 0, hi_t = span;
        // What hi_t is: the bad end's time (measured, or where a run met it
        // first), a guess to double, a bad anchor's time, where a bad
        // anchor sampled from the base before is expected from this one.
        enum class Bound { ToEnd, Guessed, BadAnchor, Estimated } bound = Bound::ToEnd;
        while ((bound == Bound::Guessed || hi_t - lo_t > kFinest) && stalls < 3) {
            if (bound == Bound::BadAnchor && lo_t > 0 && (hi_t - lo_t) * 8 < lo_t) {
                // Runs from the new base keep a clock of their own: the bad
                // anchor is expected about the interval's width away, more
                // where the last change of base showed runs from a new base
                // to be slower (expected_widths), and samples bisect under
                // that estimate. One that is good past it (runs slower
                // still) looks for a bad anchor near it, doubling, and so
                // does a second good one in a row (bisecting towards an
                // estimate that is short from below, the samples never get
                // past it: 40,000 executions were left to gallop over, 24
                // probes, on the rare-call shape). (Looking for a bad anchor
                // first, with a sample at the estimate, spent a probe per
                // change of base that halved nothing: two to three a search
                // on the hot-loop shapes of bench/. Before timed runs copied
                // their shared pages first, bisecting under an estimate lost
                // fifteen where runs were much slower.)
                double width = hi_t - lo_t;
                if (rebased_width)
                    expected_widths = std::clamp((since_rebase + (lo_t + hi_t) / 2) / *rebased_width * 1.25, 1.25, 8.0);
                rebased_width = width;
                since_rebase = 0;
                base = good;
                hi_t = width * expected_widths + kFinest;
                lo_t = 0;
                bound = Bound::Estimated;
                goods_under_estimate = 0;
            }
            double target = bound == Bound::Guessed ? hi_t : (lo_t + hi_t) / 2;
            // Alarms land late by about the same time whatever the span (35
            // to 70 us here, now and then more): aimed that much earlier,
            // an anchor lands where the bisection wants it, and spans a few
            // times that lateness are still halved instead of stalling.
            double aim = std::max(target - lateness(), target / 2);
            status(fmt::format("bisecting {:.0f} us of execution", (hi_t - lo_t) * 1e6));
            std::vector<std::string> needed = goods;
            needed.insert(needed.end(), {base, good, in.good, in.bad});
            if (bad_anchor)
                needed.push_back(*bad_anchor);
            hold(needed);
            auto reply =
                nlohmann::json::parse(tool(fmt::format("rw-sample {} 1 {}", base, static_cast<uint64_t>(aim * 2e6))));
            auto anchors = reply["anchors"].get<std::vector<std::string>>();
            if (anchors.empty()) { // the bad end came first: a bound measured from this base
                hi_t = target;
                if (bound == Bound::Guessed || bound == Bound::Estimated)
                    bound = Bound::ToEnd;
                continue;
            }
            // Alarms land late by up to 0.1 ms: where the anchor is, is
            // what the run took to get there.
            double ran = reply["ran_us"][0].get<double>() * 1e-6;
            lateness_.push_back(ran - aim);
            std::string settled = settle(anchors[0], live);
            if (is_bad(probe(settled))) {
                bad_anchor = settled;
                bool bounded = bound == Bound::BadAnchor;
                stalls = bounded && ran >= hi_t ? stalls + 1 : 0; // no closer than the last one
                hi_t = bounded ? std::min(hi_t, ran) : ran;
                bound = Bound::BadAnchor;
            } else {
                good = settled;
                goods.push_back(good);
                bool bounded = bound == Bound::BadAnchor || bound == Bound::Estimated;
                // From this good anchor, look for a bad one about `width` away (doubling).
                auto look_near_good = [&](double width) {
                    since_rebase += ran;
                    base = good;
                    lo_t = 0;
                    hi_t = std::max(width, 2 * kFinest);
                    bound = Bound::Guessed;
                };
                if (bounded && ran >= hi_t) {
                    // Good, yet past the bad anchor's time: the runs from
                    // the base disagree (an alarm that came very late, by
                    // 2.5 ms once). Close in time is not close in progress:
                    // naming the bad anchor from here could mean counting a
                    // hot instruction for a million executions. Look for a
                    // bad anchor near this one instead.
                    look_near_good(hi_t - lo_t);
                } else if (bound == Bound::Estimated && ++goods_under_estimate >= 2) {
                    look_near_good(hi_t - ran);
                } else if (bounded) {
                    stalls = ran <= lo_t ? stalls + 1 : 0;
                    lo_t = std::max(lo_t, ran);
                } else if (bound == Bound::Guessed) {
                    since_rebase += ran;
                    base = good;
                    hi_t *= 2;
                } else if (hi_t - ran < kKeepBase) {
                    // Little is left: samples go on from the same base. A
                    // run restored from a new one first copies every page it
                    // writes, a cost of its own (about 2 ms on the graph
                    // example, whose edges are all over its heap) that the
                    // measured time left includes and a half of it does not
                    // get past: re-based at each good anchor, the search
                    // took 50 samples there that moved almost nothing.
                    lo_t = ran;
                } else {
                    // The time left from here, measured by a run to the bad
                    // end. (Estimated as what was left less what this run
                    // took, the plan fell short over and over where the
                    // program writes much memory: list_corrupt's shape took
                    // 60 samples instead of 15.)
                    base = good;
                    lo_t = 0;
                    hi_t = running_time(good, relative_bad(good));
                }
            }
        }
        span = hi_t - lo_t;
        if (bad_anchor)
            left = name_bad();
        else
            left = {good, good == in.good ? in.bad : relative_bad(good)};
        if (found_at_write_)
            return left;
        if (left.good == previous.good && left.bad == previous.bad)
            break; // no progress
        previous = left;
        // Counted by int3s, a count's time is mostly its traps: no measure
        // of the running time left, and another round would plan from it.
        if (soft_counting_ || span < kRoundAgain)
            break;
        span = running_time(left.good, left.bad);
        if (span < kCountable)
            break;
        good = left.good;
    }
    return left;
}

double WatchSearch::lateness() const
{
    // The median of the last few: one alarm in ten or so lands much later.
    constexpr size_t kLast = 5;
    if (lateness_.empty())
        return 0;
    std::vector<double> last(lateness_.end() - static_cast<long>(std::min(kLast, lateness_.size())), lateness_.end());
    std::nth_element(last.begin(), last.begin() + static_cast<long>(last.size() / 2), last.end());
    return std::max(0.0, last[last.size() / 2]);
}

std::vector<WatchSearch::Frame> WatchSearch::live_across(const Interval& in)
{
    std::vector<Frame> at_good = frames_at(in.good), at_bad = frames_at(in.bad), live;
    for (size_t i = 0; i < at_good.size() && i < at_bad.size() &&
                       at_good[at_good.size() - 1 - i].function == at_bad[at_bad.size() - 1 - i].function;
         i++)
        live.push_back(at_good[at_good.size() - 1 - i]);
    return live;
}

std::string WatchSearch::settle(const std::string& anchor, const std::vector<Frame>& live)
{
    // An interrupt stops the program anywhere, often in the middle of an
    // update (a realloc under way, a counter bumped before the slot it
    // counts is written), where EXPR may briefly take a value it never
    // keeps. Evaluate instead where the outermost function, running across
    // the whole interval (main), gets control back: the program is between
    // two of its own steps there (a loop between two calls), as at the
    // positions the later levels of the search count. (Names alone cannot
    // tell one call of add_edge from the next, so deeper functions shared
    // by both ends are not known to be the same calls.)
    std::vector<Frame> frames = frames_at(anchor);
    if (frames.size() < 2 || live.empty() || frames.back().function != live.front().function)
        return anchor;                  // no shared caller, or the anchor is in that function itself
    uint64_t resume = frames.back().pc; // where its callee returns
    // Functions inlined into it are frames of gdb's at the same pc: the
    // anchor is in its own code then, and `resume` the instruction it
    // stopped at (a loop's, run thousands of times before the state
    // comes again, which naming the anchor would count one by one).
    if (resume == frames.front().pc)
        return anchor;
    std::string settled = with_segment(anchor, "b" + addr_text(resume) + "x1");
    try {
        go(settled);
    } catch (const std::runtime_error&) {
        return anchor; // the call outlasts the stretch
    }
    return settled;
}

} // namespace rw::cli
