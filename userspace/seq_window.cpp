#include "seq_window.h"

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
    const auto* sc = std::get_if<SyscallEvent>(&event);
    if (written_any_ && seq < written_up_to_ && !(sc && (sc->flags & kSyscallRebuilt)))
        late_++;
    held_bytes_ += event_memory_size(event);
    held_.emplace(seq, std::move(event));
    while (over_budget()) {
        auto first = held_.begin();
        written_up_to_ = first->first;
        written_any_ = true;
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
