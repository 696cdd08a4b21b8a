#include "pmu.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rw::perfclock {

PmuStatus probe_pmu()
{
    PmuStatus s;
    if (!std::filesystem::exists("/sys/bus/event_source/devices/cpu") &&
        !std::filesystem::exists("/sys/bus/event_source/devices/cpu_core")) {
        s.description = "no CPU PMU is exposed (/sys/bus/event_source/devices has no cpu)";
        return s;
    }
    struct perf_event_attr attr {};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_HARDWARE;
    attr.config = PERF_COUNT_HW_BRANCH_INSTRUCTIONS;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
    if (fd < 0) {
        s.description = std::string("branch counter unavailable: ") + strerror(errno);
        return s;
    }
    close(fd);
    s.available = true;
    s.description = "retired-branch counter available";
    return s;
}

} // namespace rw::perfclock
