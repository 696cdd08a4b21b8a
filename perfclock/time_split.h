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
#include <vector>

#include "event.h"

namespace rw::perfclock {

// One process's running time at each position of a recording (position p
// follows p events): the sum, over its threads, of what each syscall's
// exit time added to its thread's. Syscalls carry their thread's running
// time (from each return to the next entry: not the time a call blocked);
// a process's threads run side by side, so their clocks add up, and other
// processes' events add nothing (a shell waiting for its child).
class RunningTimes {
public:
    // `from_zero`: thread clocks start at 0 (exit time 1) when the thread
    // does; false for older recordings, whose exit times are wall-clock
    // jiffies (a thread's first syscall then adds nothing).
    // `next` gives the recording's events in order, false after the last.
    RunningTimes(const std::function<bool(Event&)>& next, Tid process, bool from_zero);
    Tid process() const { return process_; }
    uint64_t at(uint64_t position) const;

private:
    Tid process_;
    // (position, time) where the time grows: as many as 250 us units of
    // running time at most, however many events a syscall-heavy
    // recording holds (a value per event took 8 bytes each).
    std::vector<std::pair<uint64_t, uint64_t>> steps_;
};

// A boundary strictly between positions lo and hi (hi - lo >= 2): the first
// whose time reaches the middle of the times at lo and hi, or the middle
// one where the times do not tell the two apart (a burst of syscalls with
// no running time between them).
// `by_time`, if given, says which of the two it is; `share`, the part of
// the time from lo to hi that lies before the boundary (a computation
// between two syscalls holds nearly all of it: the boundary after it is
// then near the end in time, whatever its index).
uint64_t split_by_time(uint64_t lo, uint64_t hi, const RunningTimes& times, bool* by_time = nullptr,
                       double* share = nullptr);

} // namespace rw::perfclock
