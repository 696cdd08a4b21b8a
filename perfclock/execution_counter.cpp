#include "execution_counter.h"

#include <algorithm>
#include <cstring>

#include "process_image.h"
#include "tracee.h"

namespace rw::perfclock {

namespace {

// An int3 written outside code would change data (a return address gdb
// unwound from a frame without CFI can point anywhere); such an address is
// never executed, so its count stays 0 with nothing planted.
bool executable(pid_t tid, uint64_t addr)
{
    for (const Mapping& m : read_mappings(tid))
        if (addr >= m.start && addr < m.end)
            return m.perms.size() > 2 && m.perms[2] == 'x';
    return false;
}

} // namespace

std::shared_ptr<SoftCounters::Counter> SoftCounters::add(pid_t tid, uint64_t addr, uint64_t stop_after, uint64_t tag)
{
    auto c = std::make_shared<Counter>(Counter{addr, stop_after, tag, 0});
    if (!sites_.contains(addr) && !executable(tid, addr))
        return c;
    Site& site = sites_[addr];
    if (!site.trap) {
        try {
            if (auto under = foreign_ ? foreign_(addr) : std::nullopt)
                site.trap = std::make_unique<InstructionTrap>(tid, addr, under,
                                                              [this, addr] { return foreign_(addr).has_value(); });
            else
                site.trap = std::make_unique<InstructionTrap>(tid, addr);
        } catch (...) {
            sites_.erase(addr);
            throw;
        }
        if (lifted_ == addr)
            lifted_ = 0; // a new int3 where an old one was out: nothing to put back
    }
    site.counters.push_back(c);
    return c;
}

void SoftCounters::remove(const std::shared_ptr<Counter>& counter)
{
    auto it = sites_.find(counter->addr);
    if (it == sites_.end())
        return;
    auto& cs = it->second.counters;
    cs.erase(std::remove(cs.begin(), cs.end(), counter), cs.end());
    if (cs.empty()) {
        sites_.erase(it); // the trap's destructor puts the instruction back
        if (lifted_ == counter->addr)
            lifted_ = 0;
    }
}

void SoftCounters::replant()
{
    if (auto it = sites_.find(lifted_); lifted_ && it != sites_.end())
        it->second.trap->plant();
    lifted_ = 0;
}

SoftCounters::Claim SoftCounters::claim(TrappedThread& task, const siginfo_t& info)
{
    Claim c;
    bool step = info.si_code == kTrapTrace || info.si_code == SIGTRAP;
    if (lifted_ && task.tid() == lifted_tid_) {
        // Whatever stopped the thread, the instruction under the lifted
        // int3 has run (or the thread went elsewhere): it goes back in.
        replant();
        bool ours = swallow_step_;
        swallow_step_ = false;
        if (step && ours) {
            c.kind = Claim::Kind::Handled;
            c.then = task.single_stepping() ? AfterTrap::Step : AfterTrap::Resume;
            return c;
        }
    }
    if (info.si_code != SI_KERNEL || sites_.empty())
        return c;
    Registers regs = task.regs();
    uint64_t at = regs[Registers::RIP] - 1;
    auto it = sites_.find(at);
    if (it == sites_.end())
        return c;
    // The int3 ran: the thread is at the instruction, which has not.
    regs[Registers::RIP] = at;
    task.set_regs(regs);
    const Counter* fired = nullptr;
    for (auto& counter : it->second.counters) {
        counter->count++;
        if (!fired && counter->stop_after && counter->count % counter->stop_after == 0)
            fired = counter.get();
    }
    it->second.trap->lift();
    lifted_ = at;
    lifted_tid_ = task.tid();
    if (!fired) {
        // Counted: run the instruction alone, then the int3 goes back.
        swallow_step_ = !task.single_stepping();
        c.kind = Claim::Kind::Handled;
        c.then = AfterTrap::Step;
        return c;
    }
    c.kind = Claim::Kind::Fired;
    c.info = info;
    c.info.si_code = kTrapPerf;
    std::memcpy(reinterpret_cast<char*>(&c.info) + 24, &fired->tag, sizeof fired->tag); // see perf_data()
    return c;
}

bool SoftCounters::step_after_fired(TrappedThread& task, bool owner_steps)
{
    if (!lifted_ || task.tid() != lifted_tid_)
        return false; // the counter is gone, and its int3 with it
    // A resume would run on with the int3 out: one step first, ours alone
    // unless the owner steps anyway.
    swallow_step_ = !owner_steps && !task.single_stepping();
    return true;
}

void SoftCounters::lift_all()
{
    for (auto& [addr, site] : sites_)
        if (addr != lifted_)
            site.trap->lift();
}

void SoftCounters::plant_all()
{
    for (auto& [addr, site] : sites_)
        if (addr != lifted_)
            site.trap->plant();
}

ExecutionCounter::ExecutionCounter(SoftCounters& soft, pid_t tid, uint64_t addr, uint64_t stop_after, uint64_t tag)
    : addr_(addr)
{
    if (breakpoints_work()) {
        hardware_.emplace(tid, BreakpointKind::Execute, addr, 8, stop_after, tag);
    } else {
        counter_ = soft.add(tid, addr, stop_after, tag);
        soft_ = &soft;
    }
}

ExecutionCounter::~ExecutionCounter()
{
    if (soft_ && counter_)
        soft_->remove(counter_);
}

ExecutionCounter::ExecutionCounter(ExecutionCounter&& other) noexcept
    : addr_(other.addr_), hardware_(std::move(other.hardware_)), soft_(other.soft_), counter_(std::move(other.counter_))
{
    other.hardware_.reset();
    other.soft_ = nullptr;
}

uint64_t ExecutionCounter::count() const
{
    return hardware_ ? hardware_->count() : counter_->count;
}

} // namespace rw::perfclock
