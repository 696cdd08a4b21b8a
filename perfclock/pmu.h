// Hardware performance counters: present or not, and why. Their absence is
// the normal case on our machines; positions then come from the software
// clock (event index + hardware-breakpoint counts + single steps).
#pragma once

#include <string>

namespace rw::perfclock {

struct PmuStatus {
    bool available = false;
    std::string description; // what was found, or why not
};

PmuStatus probe_pmu();

} // namespace rw::perfclock
