#include "event_orderer.h"

namespace rw {

void EventOrderer::emit(Event event)
{
    uint64_t seq = event_seq(event);
    if (open_.empty() || seq < *open_.begin()) {
        // Every held event comes after the first open reservation, so after this one too.
        out_.emit(std::move(event));
        return;
    }
    held_.emplace(seq, std::move(event));
}

void EventOrderer::fill(Event event)
{
    uint64_t seq = event_seq(event);
    open_.erase(seq);
    held_.emplace(seq, std::move(event));
    release();
}

void EventOrderer::cancel(uint64_t seq)
{
    open_.erase(seq);
    release();
}

void EventOrderer::release()
{
    while (!held_.empty() && (open_.empty() || held_.begin()->first < *open_.begin())) {
        out_.emit(std::move(held_.begin()->second));
        held_.erase(held_.begin());
    }
}

size_t EventOrderer::finish()
{
    size_t unfilled = open_.size();
    open_.clear();
    release();
    return unfilled;
}

} // namespace rw
