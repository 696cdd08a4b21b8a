#include "time_split.h"

#include <algorithm>
#include <variant>

namespace rw::replay {
namespace {

// A syscall's time within this many events of an index stands for it.
constexpr uint64_t kNearby = 32;

std::optional<uint64_t> time_of(const std::optional<Event>& e)
{
    const auto* s = e ? std::get_if<SyscallEvent>(&*e) : nullptr;
    if (!s || s->exit_time == 0)
        return std::nullopt;
    return s->exit_time;
}

} // namespace

uint64_t split_by_time(uint64_t lo, uint64_t hi, const std::function<std::optional<Event>(uint64_t)>& event_at,
                       bool* by_time, double* share)
{
    if (by_time)
        *by_time = false;
    if (share)
        *share = 0.5;
    uint64_t middle = lo + (hi - lo) / 2;
    if (hi - lo < 2)
        return middle;
    // Position i follows i events: its time is the exit of event i - 1, the
    // last one replayed there. Taken from event i instead, every boundary
    // looked one stretch later than it is, and a stretch holding most of the
    // time (a computation between two syscalls) was split past, a probe on
    // the wrong side of it.
    auto time_from = [&](uint64_t i) -> std::optional<uint64_t> { // the first syscall's at or after position i
        for (uint64_t j = i == 0 ? 0 : i - 1; j < hi && j < i + kNearby; j++)
            if (auto t = time_of(event_at(j)))
                return t;
        return std::nullopt;
    };
    auto time_until = [&](uint64_t i) -> std::optional<uint64_t> { // the last syscall's at or before position i
        for (uint64_t j = i; j > lo && j + kNearby > i; j--)
            if (auto t = time_of(event_at(j - 1)))
                return t;
        return std::nullopt;
    };
    auto t_lo = time_from(lo), t_hi = time_until(hi);
    // Two ticks apart at least: one tick may be no time at all.
    if (!t_lo || !t_hi || *t_hi < *t_lo + 2)
        return middle;
    if (by_time)
        *by_time = true;
    uint64_t want = *t_lo + (*t_hi - *t_lo) / 2;
    // The first position in (lo, hi) whose time reaches `want`; positions
    // whose neighbourhood has no syscall count as early (the search goes on
    // right).
    uint64_t a = lo + 1, b = hi - 1;
    while (a < b) {
        uint64_t m = a + (b - a) / 2;
        auto t = time_from(m);
        if (t && *t >= want)
            b = m;
        else
            a = m + 1;
    }
    if (auto t = time_from(a); share && t)
        *share =
            std::clamp(static_cast<double>(*t) - static_cast<double>(*t_lo), 0.0, static_cast<double>(*t_hi - *t_lo)) /
            static_cast<double>(*t_hi - *t_lo);
    return a;
}

} // namespace rw::replay
