#include "time_split.h"

#include <algorithm>
#include <unordered_map>
#include <variant>

namespace rw::perfclock {

RunningTimes::RunningTimes(const std::function<bool(Event&)>& next, Tid process, bool from_zero) : process_(process)
{
    std::unordered_map<Tid, uint64_t> last; // each thread's exit time so far
    uint64_t total = 0, index = 0;
    for (Event e; next(e); index++) {
        const auto* s = std::get_if<SyscallEvent>(&e);
        if (!s || s->exit_time == 0 || s->tgid != process)
            continue;
        auto [it, first] = last.try_emplace(s->tid, from_zero ? 1 : s->exit_time);
        // A clock that went back (a thread id reused) starts again.
        uint64_t added = s->exit_time >= it->second ? s->exit_time - it->second : 0;
        it->second = s->exit_time;
        if (added) {
            total += added;
            // Position index + 1 follows this event: the time its exit reported.
            steps_.emplace_back(index + 1, total);
        }
    }
}

uint64_t RunningTimes::at(uint64_t position) const
{
    // The last step at or before the position.
    auto after = std::upper_bound(steps_.begin(), steps_.end(), position,
                                  [](uint64_t p, const std::pair<uint64_t, uint64_t>& s) { return p < s.first; });
    return after == steps_.begin() ? 0 : std::prev(after)->second;
}

uint64_t split_by_time(uint64_t lo, uint64_t hi, const RunningTimes& times, bool* by_time, double* share)
{
    if (by_time)
        *by_time = false;
    if (share)
        *share = 0.5;
    uint64_t middle = lo + (hi - lo) / 2;
    if (hi - lo < 2)
        return middle;
    // Position i follows i events: its time is what the exit of event i - 1
    // reported, the last one replayed there. (Taken from event i instead,
    // every boundary looked one stretch later than it is, and a stretch
    // holding most of the time, a computation between two syscalls, was
    // split past: a probe on the wrong side of it.) The time a stretch
    // holds shows at the exit of the syscall that ends it: the boundary
    // after that syscall, hi, has it.
    uint64_t t_lo = times.at(lo), t_hi = times.at(hi);
    // Two units apart at least: one may be no time at all.
    if (t_hi < t_lo + 2)
        return middle;
    if (by_time)
        *by_time = true;
    uint64_t want = t_lo + (t_hi - t_lo) / 2;
    // The first position in (lo, hi) whose time reaches `want`.
    uint64_t a = lo + 1, b = hi - 1;
    while (a < b) {
        uint64_t m = a + (b - a) / 2;
        if (times.at(m) >= want)
            b = m;
        else
            a = m + 1;
    }
    if (share)
        *share = static_cast<double>(std::clamp(times.at(a), t_lo, t_hi) - t_lo) / static_cast<double>(t_hi - t_lo);
    return a;
}

} // namespace rw::perfclock
