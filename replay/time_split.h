// Where to split a run of events so that each side holds about half the
// recorded time: a bisection over events that halves time instead of event
// counts needs a probe per bit of the program's running time, not one per
// bit of its event count (a program that computes for a second between two
// of its forty startup syscalls otherwise costs five probes on events that
// say nothing about the computation).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "event.h"

namespace rw::replay {

// A boundary strictly between positions lo and hi (hi - lo >= 2): the first
// whose recorded time (the exit of the event before it) reaches the middle
// of the times at lo and hi, or the middle one where the times do not tell
// the two apart (syscalls carry the kernel's coarse clock at their exit;
// other events none).
// `by_time`, if given, says which of the two it is; `share`, the part of
// the time from lo to hi that lies before the boundary (a computation
// between two syscalls holds nearly all of it: the boundary after it is
// then near the end in time, whatever its index).
uint64_t split_by_time(uint64_t lo, uint64_t hi, const std::function<std::optional<Event>(uint64_t)>& event_at,
                       bool* by_time = nullptr, double* share = nullptr);

} // namespace rw::replay
