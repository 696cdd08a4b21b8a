#include "seq_window.h"

#include <algorithm>

namespace rw {

bool SeqWindow::over_budget() const
{
    if (held_.size() <= min_events_)
        return false;
    return held_.size() > max_events_ || held_bytes_ > max_bytes_;
}

void SeqWindow::emit(Event event)
{
    uint64_t seq = event_seq(event);
    if (seq == next_) {
        out_.emit(std::move(event));
        next_++;
        release_in_order();
        return;
    }
    if (seq < next_) {
        const auto* sc = std::get_if<SyscallEvent>(&event);
        if (!(sc && (sc->flags & kSyscallRebuilt)))
            late_++;
        out_.emit(std::move(event));
        return;
    }
    held_bytes_ += event_memory_size(event);
    held_.emplace(seq, std::move(event));
    // A stalled syscall's gap would hold everything until the supervisor
    // gets to that thread, which may be long when the ring is full (the
    // usual reason to stall): the bursts at the end of such waits filled
    // the ring again.
    while (stalled_ && held_.size() >= min_events_ && asked_ != next_) {
        asked_ = next_;
        if (!stalled_(next_))
            break;
        next_++;
        release_in_order();
    }
    while (over_budget()) {
        // The gap is given up: the first event held goes out next.
        next_ = held_.begin()->first;
        release_in_order();
    }
}

void SeqWindow::release_in_order()
{
    while (!held_.empty() && held_.begin()->first <= next_) {
        auto first = held_.begin();
        next_ = std::max(next_, first->first + 1);
        held_bytes_ -= event_memory_size(first->second);
        out_.emit(std::move(first->second));
        held_.erase(first);
    }
}

void SeqWindow::finish()
{
    for (auto& [seq, event] : held_)
        out_.emit(std::move(event));
    held_.clear();
    held_bytes_ = 0;
}

} // namespace rw
