#include "event_source.h"

#include <cstddef>

namespace rw::replay {

bool EventSource::fill_one()
{
    Event e;
    for (;;) {
        if (!reader_.next(e))
            return false;
        uint64_t index = read_++;
        if (taken_ahead_.erase(index))
            continue; // replayed already, ahead of its turn
        uint64_t seq = event_seq(e);
        if (!buffer_.empty() && buffer_.back().seq > seq)
            inversions_++;
        buffer_.push_back({index, std::move(e), seq});
        return true;
    }
}

EventSource::Checkpoint EventSource::checkpoint() const
{
    Checkpoint c;
    c.cursor = next_index();
    c.taken_ahead = taken_ahead_;
    // Events taken out of order from the buffer are holes in it.
    uint64_t expect = c.cursor;
    for (const auto& e : buffer_) {
        for (; expect < e.index; expect++)
            c.taken_ahead.insert(expect);
        expect = e.index + 1;
    }
    for (; expect < read_; expect++)
        c.taken_ahead.insert(expect);
    return c;
}

EventSource::Checkpoint EventSource::checkpoint_before(uint64_t index) const
{
    Checkpoint c = checkpoint();
    if (index >= c.cursor)
        return c;
    for (uint64_t i = index + 1; i < c.cursor; i++)
        c.taken_ahead.insert(i);
    c.cursor = index;
    return c;
}

void EventSource::restore(const Checkpoint& c)
{
    buffer_.clear();
    inversions_ = 0;
    taken_ahead_ = c.taken_ahead;
    reader_.seek(c.cursor);
    read_ = c.cursor;
}

void EventSource::erase_at(size_t i)
{
    auto inverted = [&](size_t a, size_t b) { return buffer_[a].seq > buffer_[b].seq; };
    bool has_prev = i > 0, has_next = i + 1 < buffer_.size();
    if (has_prev && inverted(i - 1, i))
        inversions_--;
    if (has_next && inverted(i, i + 1))
        inversions_--;
    if (has_prev && has_next && inverted(i - 1, i + 1))
        inversions_++;
    buffer_.erase(buffer_.begin() + static_cast<std::ptrdiff_t>(i));
}

std::optional<size_t> EventSource::front()
{
    if (buffer_.empty() && !fill_one())
        return std::nullopt;
    if (!by_seq_)
        return 0;
    while (buffer_.size() < kSeqWindow && fill_one()) {
    }
    if (inversions_ == 0)
        return 0; // in order already (as recorders since the seq window write it)
    size_t best = 0;
    for (size_t i = 1; i < buffer_.size(); i++)
        if (buffer_[i].seq < buffer_[best].seq)
            best = i;
    return best;
}

const IndexedEvent* EventSource::peek()
{
    auto i = front();
    return i ? &buffer_[*i] : nullptr;
}

const IndexedEvent* EventSource::peek_ahead(size_t ahead)
{
    while (buffer_.size() <= ahead)
        if (!fill_one())
            return nullptr;
    return &buffer_[ahead];
}

std::optional<IndexedEvent> EventSource::next()
{
    auto i = front();
    if (!i)
        return std::nullopt;
    IndexedEvent e = std::move(buffer_[*i]);
    erase_at(*i);
    return e;
}

const IndexedEvent* EventSource::peek_for_task(Tid tid, size_t skip, size_t within)
{
    for (size_t i = 0; i < within; i++) {
        while (buffer_.size() <= i)
            if (!fill_one())
                return nullptr;
        if (event_tid(buffer_[i].event) == tid) {
            if (skip == 0)
                return &buffer_[i];
            skip--;
        }
    }
    return nullptr;
}

std::optional<IndexedEvent> EventSource::take_for_task(Tid tid)
{
    if (!peek_for_task(tid))
        return std::nullopt;
    for (auto it = buffer_.begin(); it != buffer_.end(); ++it) {
        if (event_tid(it->event) == tid) {
            IndexedEvent e = std::move(*it);
            erase_at(static_cast<size_t>(it - buffer_.begin()));
            return e;
        }
    }
    return std::nullopt;
}

uint64_t EventSource::next_index() const
{
    return buffer_.empty() ? read_ : buffer_.front().index;
}

} // namespace rw::replay
