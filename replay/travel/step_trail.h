// The instructions a stepped search went through last. Stepping back again
// in the same stretch (gdb's reverse-next is many reverse-stepi) is then
// answered from here instead of single-stepping the stretch once more.
// Each place is named by an execution count, which a counter reaches at
// full speed; only where that would be ambiguous (the instruction the
// stretch starts on) by a count of steps.
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>

#include "position.h"

namespace rw::replay {

class StepTrail {
public:
    static constexpr size_t kMostSteps = 1 << 16;

    void start(const perfclock::Position& base, uint64_t start_rip)
    {
        base_ = base;
        start_rip_ = start_rip;
        complete_ = true;
        valid_ = true;
        counts_.clear();
        steps_.clear();
        index_ = 0;
    }

    // One more step; the thread now stands before the instruction at `rip`.
    void stepped(uint64_t rip)
    {
        steps_.push_back({rip, ++counts_[rip], ++index_});
        if (steps_.size() > kMostSteps) {
            steps_.pop_front();
            complete_ = false;
        }
    }

    // Where the latest step stands (the base if none was taken).
    perfclock::Position last() const { return steps_.empty() ? base_ : name(steps_.back()); }

    // Forgets the last step if it landed at `rip`: the search arrived there
    // by a trap of the instruction it landed on, not by a step of its own.
    bool drop_last_at(uint64_t rip)
    {
        if (steps_.empty() || steps_.back().rip != rip)
            return false;
        if (--counts_[rip] == 0)
            counts_.erase(rip);
        steps_.pop_back();
        index_--;
        return true;
    }

    // The position one instruction before `p`, if `p` is on the trail.
    std::optional<perfclock::Position> before(const perfclock::Position& p) const
    {
        if (!valid_ || p.path.empty() || p.parent() != base_)
            return std::nullopt;
        const perfclock::Segment& s = p.path.back();
        for (size_t i = steps_.size(); i-- > 0;) {
            const Step& step = steps_[i];
            bool here = s.kind == perfclock::Segment::Kind::Step ? step.index == s.count
                        : s.kind == perfclock::Segment::Kind::Break
                            ? step.rip == s.addr && step.count == s.count && step.rip != start_rip_
                            : false;
            if (!here)
                continue;
            if (i > 0)
                return name(steps_[i - 1]);
            if (complete_)
                return base_;
            return std::nullopt;
        }
        return std::nullopt;
    }

    void clear() { valid_ = false; }

private:
    struct Step {
        uint64_t rip;
        uint64_t count; // executions of rip since the base, this one included
        uint64_t index; // steps since the base
    };

    perfclock::Position name(const Step& s) const
    {
        return s.rip != start_rip_ ? base_.with(perfclock::Segment::brk(s.rip, s.count))
                                   : base_.with(perfclock::Segment::step(s.index));
    }

    perfclock::Position base_;
    uint64_t start_rip_ = 0;
    bool complete_ = true; // no step was dropped
    bool valid_ = false;
    uint64_t index_ = 0;
    std::unordered_map<uint64_t, uint64_t> counts_;
    std::deque<Step> steps_;
};

} // namespace rw::replay
