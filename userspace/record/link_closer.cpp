#include "link_closer.h"

namespace rw {

LinkCloser::~LinkCloser()
{
    finish();
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_)
        worker.join();
}

void LinkCloser::close(std::vector<UniqueFd> links)
{
    if (links.empty())
        return;
    std::lock_guard lock(mutex_);
    for (auto& link : links)
        pending_.push_back(std::move(link));
    // One worker per link waiting, so that their waits overlap.
    while (pending_.size() > idle_ && workers_.size() < kMaxWorkers) {
        workers_.emplace_back([this] { work(); });
        idle_++;
    }
    wake_.notify_all();
}

void LinkCloser::finish()
{
    std::unique_lock lock(mutex_);
    done_.wait(lock, [this] { return pending_.empty() && closing_ == 0; });
}

size_t LinkCloser::workers() const
{
    std::lock_guard lock(mutex_);
    return workers_.size();
}

void LinkCloser::work()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
        if (pending_.empty())
            return; // stopping, with nothing left
        UniqueFd link = std::move(pending_.front());
        pending_.pop_front();
        idle_--;
        closing_++;
        lock.unlock();
        link.reset();
        lock.lock();
        closing_--;
        idle_++;
        if (pending_.empty() && closing_ == 0)
            done_.notify_all();
    }
}

} // namespace rw
