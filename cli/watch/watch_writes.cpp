// rewind watch's write level: where EXPR reads small pieces of memory (a
// flag, a counter, a field, a pointer and the field it points to), debug
// registers count the writes to them in a stretch (the kernel counts each;
// the tracer sees none), and the search bisects over those writes instead
// of over time and executions. The change is then at a write: the
// instruction before it is the last good state.
#include <fmt/core.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "nlohmann/json.hpp"
#include "watch_positions.h"
#include "watch_search.h"

namespace rw::cli {
using namespace watch_text;
namespace {

// Stops the server may make finding the instruction before a write (about
// 30 to 60 us each in our VMs): past them, a narrower stretch is cheaper.
constexpr int kMostBackTraps = 4096;
// Stretches of more running time are narrowed by time before their writes.
constexpr double kWritesFirstMost = 50e-3;

// The length of one debug register's range that covers [lo, hi): 1, 2, 4
// or 8 bytes at an address it divides; 0 if none does.
uint32_t covering_length(uint64_t lo, uint64_t hi)
{
    for (uint32_t len : {1u, 2u, 4u, 8u})
        if (lo < hi && (lo & ~static_cast<uint64_t>(len - 1)) + len >= hi)
            return len;
    return 0;
}

} // namespace

WatchSearch::Pieces WatchSearch::watched_pieces(const std::string& position)
{
    if (!watchable_ || soft_counting_)
        return {};
    go(position);
    std::string here = here_;
    // gdb works out what to watch (the value chain: each lvalue EXPR reads);
    // with breakpoints always inserted it sends those locations at once,
    // and the server holds them back from the replay.
    // (Without calling EXPR's functions: gdb would watch such an
    // expression in software, and a call may cost as much as a probe.)
    tool("rw-capture-watch start");
    gdb_.console("set breakpoint always-inserted on");
    gdb_.console("set may-call-functions off");
    MiResult w = in_scope("-break-watch");
    gdb_.console("set may-call-functions on");
    auto captured = nlohmann::json::parse(tool("rw-capture-watch end"))["ranges"];
    // (MI says `wpt` for either kind: a software watchpoint inserts nothing.)
    if (const MiValue* wpt = w.ok() ? w.values.get("wpt") : nullptr)
        gdb_.command("-break-delete " + wpt->str("number"));
    gdb_.console("set breakpoint always-inserted off");
    here_ = here; // (the capture did not move the replay)
    if (captured.empty()) {
        // A software watchpoint: EXPR calls functions or reads registers,
        // at every position. (Another error may be this position's alone.)
        watchable_ = !w.ok() && w.error().find("may-call-functions") == std::string::npos;
        return {};
    }
    // One debug register each: 1, 2, 4 or 8 bytes at an address they divide
    // (bytes next to EXPR's in one add writes to bisect over, not errors).
    Pieces pieces;
    auto add = [&](uint64_t start, uint32_t len) {
        if (std::none_of(pieces.begin(), pieces.end(), [&](const Piece& p) { return p.addr == start; }))
            pieces.push_back({start, len});
    };
    for (const auto& r : captured) {
        if (r["access"].get<int>() != 1)
            continue;
        uint64_t lo = r["addr"].get<uint64_t>(), hi = lo + r["len"].get<uint64_t>();
        if (uint32_t len = covering_length(lo, hi))
            add(lo & ~static_cast<uint64_t>(len - 1), len);
        else
            for (uint64_t a = lo & ~7ull; a < hi; a += 8)
                add(a, 8);
    }
    // A counted run has two debug registers to spare with certainty (its
    // end and its start may take the others).
    if (pieces.size() > 2)
        pieces.clear();
    return pieces;
}

WatchSearch::Pieces WatchSearch::pieces_for(const Interval& in)
{
    // (Where EXPR's names do not resolve at the good end, in the dynamic
    // loader before main, what gdb watched at --at says it.)
    Pieces pieces = watched_pieces(in.good);
    return !pieces.empty() || !watchable_ ? pieces : end_pieces_;
}

std::optional<std::vector<uint64_t>> WatchSearch::count_writes(const Interval& in, const Pieces& pieces, uint64_t most)
{
    status("counting writes in " + in.good + " .. " + in.bad);
    std::optional<std::vector<uint64_t>> counts;
    try {
        std::string command = "rw-count " + in.good + " " + in.bad;
        for (const Piece& p : pieces)
            command += fmt::format(" w{}.{}", addr_text(p.addr), p.len);
        if (most)
            command += fmt::format(" most={}", most);
        auto j = nlohmann::json::parse(tool(command));
        arrived(j["position"].get<std::string>());
        counts = j["writes"].get<std::vector<uint64_t>>();
        // The kernel counts each write in a debug exception (about 10 us
        // here): with at most one a millisecond, the run is timed as one
        // without a counter would be.
        double seconds = j["seconds"].get<double>();
        uint64_t all = 0;
        for (uint64_t c : *counts)
            all += c;
        if (static_cast<double>(all) <= seconds * 1000)
            running_times_[{in.good, in.bad}] = seconds;
    } catch (const std::runtime_error& e) {
        if (std::string(e.what()).find("counting stopped") == std::string::npos)
            throw;
        // written too often here: a narrower stretch may do
    }
    return counts;
}

std::optional<WatchSearch::Interval> WatchSearch::search_writes(const Interval& in)
{
    Pieces pieces = pieces_for(in);
    if (pieces.empty())
        return std::nullopt;
    auto counts = count_writes(in, pieces);
    if (!counts)
        return std::nullopt;
    // A bad end that is the first write to one of them (an interval this
    // level left) is not a write inside the interval.
    std::string end = last_segment(in.bad);
    auto segment = [&](const Piece& p) { return fmt::format("w{}.{}.1x", addr_text(p.addr), p.len); };
    for (size_t i = 0; i < pieces.size(); i++)
        if (end == segment(pieces[i]) + "1" && (*counts)[i] > 0)
            (*counts)[i]--;
    // Where EXPR reads several places (a pointer and the field it points
    // to), only the ones written in the stretch can change it there. Two
    // written (two fields): the writes of the one written more divide the
    // interval, and a change between two of them is at a write of the
    // other, in the interval they leave.
    size_t written = static_cast<size_t>(std::count_if(counts->begin(), counts->end(), [](uint64_t c) { return c; }));
    if (written == 0)
        return std::nullopt;
    size_t which = static_cast<size_t>(std::max_element(counts->begin(), counts->end()) - counts->begin());
    const Piece* piece = &pieces[which];
    uint64_t c = (*counts)[which];
    auto between = [&](const std::string& from, const std::string& bad) -> std::optional<Interval> {
        std::string b = last_segment(bad);
        if (written < 2 || !portable_end(b, true))
            return std::nullopt;
        return search_writes({from, with_segment(from, b)});
    };
    // P(0) = good, P(k) right after the k-th write, P(c + 1) = bad.
    auto at = [&](uint64_t k) {
        return k == 0 ? in.good : k > c ? in.bad : with_segment(in.good, segment(*piece) + std::to_string(k));
    };
    auto progress = [&](uint64_t l, uint64_t h) {
        return fmt::format("writes {}..{} of {} to {:#x}", l, h, c, piece->addr);
    };
    // After the last write first: good there, the writes did not make the
    // change (another thread's, or memory EXPR reads that gdb does not
    // watch), and the other levels take over at the cost of one probe. And
    // the last write itself next: a value that stays is most often the one
    // written last.
    status(progress(0, c + 1));
    if (!is_bad(probe(at(c))))
        return between(at(c), in.bad);
    uint64_t hi = c;
    if (c >= 2) {
        status(progress(0, c));
        if (is_bad(probe(at(c - 1))))
            hi = bisect(0, c - 1, at, progress).second;
    }
    // The hi-th write, or something between it and the write before: the
    // instruction before the write tells.
    std::optional<std::string> before = instruction_before(at(hi));
    if (!before)
        return std::nullopt;
    if (is_bad(probe(*before)))
        return between(at(hi - 1), with_segment(at(hi - 1), segment(*piece) + "1"));
    return Interval{*before, at(hi)};
}

std::optional<std::string> WatchSearch::instruction_before(const std::string& after_write)
{
    go(after_write);
    std::string before;
    try {
        // (Found by trapping the instructions that may have written, from
        // the write before: where they run too often, a narrower stretch.)
        before = nlohmann::json::parse(tool(fmt::format("rw-back {}", kMostBackTraps)))["position"].get<std::string>();
    } catch (const std::runtime_error&) {
        return std::nullopt;
    }
    arrived(before);
    if (before == after_write)
        return std::nullopt;
    return before;
}

WatchSearch::Interval WatchSearch::search_stretch(const Interval& in)
{
    // Where memory is short, the server lets the snapshots used least
    // recently go, anchors last: a search that comes back to one starts
    // the stretch again, its new anchors now the recent ones.
    constexpr int kAttempts = 3;
    bool anchored = in.good.find(":a") != std::string::npos || in.bad.find(":a") != std::string::npos;
    for (int attempt = 1;; attempt++) {
        try {
            return search_stretch_once(in);
        } catch (const SnapshotGone&) {
            if (anchored || attempt == kAttempts)
                throw;
            status("memory is short: the search starts this stretch again");
            found_at_write_.reset();
            here_.clear();
        }
    }
}

WatchSearch::Interval WatchSearch::search_stretch_once(const Interval& in)
{
    // In a long stretch, the instruction that made the change has often
    // run many times before (stepping back from its write costs a stop at
    // each), and going to a write costs a replay of the stretch: time
    // narrows it first there.
    if (running_time(in.good, in.bad) <= kWritesFirstMost)
        if (auto found = search_writes(in))
            return *found;
    // Written too often, or not where the change is: time narrows the
    // stretch (the writes in a narrower one may do).
    Interval narrowed = search_anchors(in);
    if (found_at_write_)
        return *found_at_write_;
    hold({narrowed.good, narrowed.bad});
    if (narrowed.good != in.good)
        if (auto found = search_writes(narrowed))
            return *found;
    return search_code(narrowed);
}

} // namespace rw::cli
