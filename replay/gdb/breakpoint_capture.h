// gdb's breakpoint and watchpoint packets held back from the replay. A
// tool (rewind watch) learns which memory gdb would watch for an
// expression by creating the watchpoint with breakpoints always inserted:
// gdb then sends what it inserts at once. What it inserts meanwhile (the
// watchpoint, its own breakpoints such as the dynamic linker's) stays out
// of the replay, and gdb's later removal of those is answered here too.
#pragma once

#include <compare>
#include <cstdint>
#include <set>
#include <vector>

namespace rw::replay {

class BreakpointCapture {
public:
    struct Packet {
        int type = 0; // as in Z<type>: 0 software, 1 hardware, 2 write, 3 read, 4 access
        uint64_t addr = 0;
        uint32_t len = 0;
        auto operator<=>(const Packet&) const = default;
    };
    void start() { capturing_ = true; }
    // The write and access watchpoints inserted since start() and not removed.
    std::vector<Packet> finish()
    {
        capturing_ = false;
        std::vector<Packet> out;
        for (const Packet& p : held_)
            if (p.type == 2 || p.type == 4)
                out.push_back(p);
        return out;
    }
    // Whether the packet is answered here: an insertion while capturing, or
    // the removal of one held.
    bool take(const Packet& p, bool insert)
    {
        if (capturing_) {
            if (insert)
                held_.insert(p);
            else
                held_.erase(p);
            return true;
        }
        return !insert && held_.erase(p) > 0;
    }

private:
    bool capturing_ = false;
    std::set<Packet> held_;
};

} // namespace rw::replay
