#include "event_orderer.h"

namespace rw {

void EventOrderer::spill_to(const std::filesystem::path& dir, size_t budget)
{
    spill_ = std::make_unique<EventSpill>(dir);
    budget_ = budget;
}

void EventOrderer::emit(Event event)
{
    uint64_t seq = event_seq(event);
    if (open_.empty() || seq < *open_.begin()) {
        // Every held event comes after the first open reservation, so after this one too.
        out_.emit(std::move(event));
        return;
    }
    hold(seq, std::move(event));
}

void EventOrderer::hold(uint64_t seq, Event event)
{
    size_t size = event_memory_size(event);
    if (spill_ && held_bytes_ + size > budget_)
        if (auto place = spill_->put(event)) {
            spilled_.emplace(seq, *place);
            return;
        }
    held_bytes_ += size;
    held_.emplace(seq, std::move(event));
}

void EventOrderer::fill(Event event)
{
    uint64_t seq = event_seq(event);
    open_.erase(seq);
    hold(seq, std::move(event));
    release();
}

void EventOrderer::cancel(uint64_t seq)
{
    open_.erase(seq);
    release();
}

void EventOrderer::release()
{
    for (;;) {
        // The lowest held seq, in memory or on disk.
        bool in_memory = !held_.empty() && (spilled_.empty() || held_.begin()->first < spilled_.begin()->first);
        if (!in_memory && spilled_.empty())
            break;
        uint64_t seq = in_memory ? held_.begin()->first : spilled_.begin()->first;
        if (!open_.empty() && seq >= *open_.begin())
            break;
        if (in_memory) {
            held_bytes_ -= event_memory_size(held_.begin()->second);
            out_.emit(std::move(held_.begin()->second));
            held_.erase(held_.begin());
        } else {
            out_.emit(spill_->take(spilled_.begin()->second));
            spilled_.erase(spilled_.begin());
        }
    }
    if (spilled_.empty() && spill_)
        spill_->clear();
}

size_t EventOrderer::finish()
{
    size_t unfilled = open_.size();
    open_.clear();
    release();
    return unfilled;
}

} // namespace rw
