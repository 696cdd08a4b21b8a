#include "breakpoint_set.h"

#include <algorithm>

#include "task.h"

namespace rw::replay {

bool BreakpointSet::add_hardware(const HardwareBreakpoint& bp)
{
    if (std::find_if(hardware_.begin(), hardware_.end(), [&](const auto& h) { return !(h < bp) && !(bp < h); }) !=
        hardware_.end())
        return false;
    hardware_.push_back(bp);
    hardware_changed_ = true; // re-armed at the next apply
    return true;
}

bool BreakpointSet::remove_hardware(const HardwareBreakpoint& bp)
{
    auto it = std::find_if(hardware_.begin(), hardware_.end(), [&](const auto& h) { return !(h < bp) && !(bp < h); });
    if (it == hardware_.end())
        return false;
    hardware_.erase(it);
    hardware_changed_ = true;
    return true;
}

std::optional<HardwareBreakpoint> BreakpointSet::hardware_for_tag(uint64_t tag) const
{
    if (tag < kTagUserBase || tag - kTagUserBase >= hardware_.size())
        return std::nullopt;
    return hardware_[tag - kTagUserBase];
}

void BreakpointSet::apply(Task& task)
{
    TraceeMemory mem = task.memory();
    pid_t process = task.group().tgid;
    if (applied_pid_ != process) {
        // A new process (restored from a snapshot): nothing of ours is in it.
        shadow_.clear();
        armed_.clear();
        armed_tids_.clear();
    }
    if (recheck_) {
        recheck_ = false;
        for (auto it = shadow_.begin(); it != shadow_.end();) {
            uint8_t now = 0;
            if (mem.read(RemoteAddr(it->first), {&now, 1}) && now == 0xcc)
                ++it;
            else
                it = shadow_.erase(it); // gone with its page: inserted again below
        }
    }
    // Software: remove what is no longer wanted, insert what is missing.
    for (auto it = shadow_.begin(); it != shadow_.end();) {
        if (software_.count(it->first)) {
            ++it;
            continue;
        }
        uint8_t original = foreign_ && foreign_(it->first) ? 0xcc : it->second;
        mem.write_code(RemoteAddr(it->first), {&original, 1});
        it = shadow_.erase(it);
    }
    for (uint64_t addr : software_) {
        if (shadow_.count(addr))
            continue;
        uint8_t original = 0;
        if (!mem.read(RemoteAddr(addr), {&original, 1}))
            continue; // not mapped yet; inserted once it is
        if (auto under = foreign_ ? foreign_(addr) : std::nullopt)
            original = *under;
        uint8_t int3 = 0xcc;
        if (mem.write_code(RemoteAddr(addr), {&int3, 1}))
            shadow_[addr] = original;
    }
    // Debug registers are per thread: every thread of the process gets them.
    std::set<pid_t> tids;
    for (Task* t : task.group().tasks)
        tids.insert(t->tid());
    if (applied_pid_ != process || hardware_changed_ || tids != armed_tids_) {
        hardware_changed_ = false;
        armed_.clear();
        for (pid_t tid : tids)
            for (size_t i = 0; i < hardware_.size(); i++) {
                const auto& h = hardware_[i];
                armed_.push_back(
                    Armed{tid, i, perfclock::BreakpointCounter(tid, h.kind, h.addr, h.len, 1, kTagUserBase + i)});
            }
        armed_tids_ = tids;
    }
    applied_pid_ = process;
}

void BreakpointSet::hide(uint64_t addr, std::span<uint8_t> data) const
{
    for (auto it = shadow_.lower_bound(addr); it != shadow_.end() && it->first < addr + data.size(); ++it)
        data[it->first - addr] = it->second;
}

std::optional<HardwareBreakpoint> BreakpointSet::counted_since_last(pid_t tid)
{
    std::optional<HardwareBreakpoint> hit;
    if (hardware_changed_)
        return hit; // armed_ follows hardware_ again at the next apply
    for (Armed& a : armed_) {
        if (a.tid != tid)
            continue;
        uint64_t n = a.counter.count();
        if (n != a.seen && !hit && a.index < hardware_.size())
            hit = hardware_[a.index];
        a.seen = n;
    }
    return hit;
}

void BreakpointSet::lift(Task& task)
{
    if (applied_pid_ != task.group().tgid)
        return;
    TraceeMemory mem = task.memory();
    for (const auto& [addr, original] : shadow_) {
        uint8_t left = foreign_ && foreign_(addr) ? 0xcc : original;
        mem.write_code(RemoteAddr(addr), {&left, 1});
    }
    shadow_.clear();
    armed_.clear();
    armed_tids_.clear();
    applied_pid_ = 0;
}

void BreakpointSet::forget_all()
{
    software_.clear();
    hardware_.clear();
    shadow_.clear();
    armed_.clear();
    armed_tids_.clear();
    applied_pid_ = 0;
    hardware_changed_ = false;
}

} // namespace rw::replay
