#include "thread_scheduler.h"

#include <algorithm>

namespace rw {

void ThreadScheduler::serialize(Tid tgid, Tid runner, Clock::time_point now)
{
    auto [it, inserted] = procs_.try_emplace(tgid);
    if (inserted) {
        it->second.running = runner;
        it->second.deadline = now + slice_;
        it->second.since = now;
    }
}

void ThreadScheduler::merge(Tid from, Tid into, Tid runner, Clock::time_point now)
{
    Process& a = procs_[into];
    Process b = std::move(procs_[from]);
    procs_.erase(from);
    std::deque<Tid> all;
    for (const auto& r : {a.running, b.running})
        if (r)
            all.push_back(*r);
    all.insert(all.end(), a.waiting.begin(), a.waiting.end());
    all.insert(all.end(), b.waiting.begin(), b.waiting.end());
    a.waiting.clear();
    for (Tid tid : all)
        if (tid != runner && std::find(a.waiting.begin(), a.waiting.end(), tid) == a.waiting.end())
            a.waiting.push_back(tid);
    a.running = runner;
    a.deadline = now + slice_;
    a.since = now;
}

bool ThreadScheduler::want(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end())
        return true;
    Process& p = it->second;
    if (p.running == tid)
        return true;
    if (!p.running) {
        p.running = tid;
        p.deadline = now + slice_;
        p.since = now;
        return true;
    }
    if (std::find(p.waiting.begin(), p.waiting.end(), tid) == p.waiting.end())
        p.waiting.push_back(tid);
    return false;
}

std::optional<Tid> ThreadScheduler::next(Process& p, Clock::time_point now)
{
    p.running.reset();
    if (p.waiting.empty())
        return std::nullopt;
    size_t pick = chaos_ ? std::uniform_int_distribution<size_t>(0, p.waiting.size() - 1)(random_) : 0;
    p.running = p.waiting[pick];
    p.waiting.erase(p.waiting.begin() + static_cast<long>(pick));
    p.deadline = now + slice_;
    p.since = now;
    return p.running;
}

std::optional<Tid> ThreadScheduler::yield(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end() || it->second.running != tid)
        return std::nullopt;
    return next(it->second, now);
}

std::optional<Tid> ThreadScheduler::gone(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end())
        return std::nullopt;
    Process& p = it->second;
    p.waiting.erase(std::remove(p.waiting.begin(), p.waiting.end(), tid), p.waiting.end());
    if (p.running != tid)
        return std::nullopt;
    return next(p, now);
}

std::optional<Tid> ThreadScheduler::running(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? std::nullopt : it->second.running;
}

ThreadScheduler::Clock::time_point ThreadScheduler::running_since(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? Clock::time_point{} : it->second.since;
}

size_t ThreadScheduler::waiting(Tid tgid) const
{
    auto it = procs_.find(tgid);
    return it == procs_.end() ? 0 : it->second.waiting.size();
}

std::vector<Tid> ThreadScheduler::overdue(Clock::time_point now) const
{
    std::vector<Tid> out;
    for (const auto& [tgid, p] : procs_)
        if (p.running && !p.waiting.empty() && now >= p.deadline)
            out.push_back(*p.running);
    return out;
}

void ThreadScheduler::extend(Tid tgid, Clock::duration more)
{
    auto it = procs_.find(tgid);
    if (it != procs_.end())
        it->second.deadline = Clock::now() + more;
}

} // namespace rw
