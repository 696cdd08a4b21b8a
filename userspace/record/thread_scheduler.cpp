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
    a.stepped_aside.merge(b.stepped_aside);
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
    // Back from sched_yield: the threads that stepped aside before it and
    // are not back yet go first.
    bool held_off = false;
    if (auto aside = p.stepped_aside.find(tid); aside != p.stepped_aside.end()) {
        uint64_t order = aside->second.order;
        p.stepped_aside.erase(aside);
        held_off = someone_aside(p, now, order);
    }
    if (p.running == tid)
        return true;
    if (!p.running && !held_off) {
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

bool ThreadScheduler::someone_aside(const Process& p, Clock::time_point now, std::optional<uint64_t> before) const
{
    return std::any_of(p.stepped_aside.begin(), p.stepped_aside.end(), [&](const auto& kv) {
        return now - kv.second.since < slice_ && (!before || kv.second.order < *before);
    });
}

std::optional<Tid> ThreadScheduler::yield(Tid tgid, Tid tid, Clock::time_point now, bool steps_aside)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end() || it->second.running != tid)
        return std::nullopt;
    if (steps_aside)
        it->second.stepped_aside[tid] = {now, ++it->second.asides};
    return next(it->second, now);
}

std::optional<Tid> ThreadScheduler::gone(Tid tgid, Tid tid, Clock::time_point now)
{
    auto it = procs_.find(tgid);
    if (it == procs_.end())
        return std::nullopt;
    Process& p = it->second;
    p.waiting.erase(std::remove(p.waiting.begin(), p.waiting.end(), tid), p.waiting.end());
    p.stepped_aside.erase(tid);
    if (p.running == tid || (!p.running && !someone_aside(p, now, std::nullopt)))
        return next(p, now);
    return std::nullopt;
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

std::vector<std::pair<Tid, Tid>> ThreadScheduler::overdue_turns(Clock::time_point now)
{
    std::vector<std::pair<Tid, Tid>> out;
    for (auto& [tgid, p] : procs_)
        if (!p.running && !p.waiting.empty() && !someone_aside(p, now, std::nullopt))
            if (auto tid = next(p, now))
                out.emplace_back(tgid, *tid);
    return out;
}

void ThreadScheduler::extend(Tid tgid, Clock::duration more)
{
    auto it = procs_.find(tgid);
    if (it != procs_.end())
        it->second.deadline = Clock::now() + more;
}

} // namespace rw
