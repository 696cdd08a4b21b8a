#include "hw_breakpoint.h"

#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

namespace rw::perfclock {

BreakpointCounter::BreakpointCounter(pid_t tid, uint64_t addr, uint64_t stop_after)
    : BreakpointCounter(tid, BreakpointKind::Execute, addr, sizeof(long), stop_after, 0)
{}

BreakpointCounter::BreakpointCounter(pid_t tid, BreakpointKind kind, uint64_t addr, uint32_t len, uint64_t stop_after,
                                     uint64_t tag)
    : addr_(addr), tag_(tag)
{
    struct perf_event_attr attr {};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_BREAKPOINT;
    attr.bp_type = kind == BreakpointKind::Execute ? HW_BREAKPOINT_X
                   : kind == BreakpointKind::Write ? HW_BREAKPOINT_W
                                                   : HW_BREAKPOINT_RW;
    attr.bp_addr = addr;
    attr.bp_len = kind == BreakpointKind::Execute ? sizeof(long) : len;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    if (stop_after) {
        attr.sample_period = stop_after;
        attr.sigtrap = 1;
        attr.sig_data = tag;
        attr.remove_on_exec = 1;
    }
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), "perf_event_open(breakpoint)");
}

BreakpointCounter::BreakpointCounter(BreakpointCounter&& other) noexcept
    : fd_(other.fd_), addr_(other.addr_), tag_(other.tag_)
{
    other.fd_ = -1;
}

BreakpointCounter::~BreakpointCounter()
{
    if (fd_ >= 0)
        close(fd_);
}

uint64_t BreakpointCounter::count() const
{
    uint64_t v = 0;
    if (read(fd_, &v, sizeof(v)) != sizeof(v))
        throw std::system_error(errno, std::generic_category(), "reading a breakpoint counter");
    return v;
}

void BreakpointCounter::reset()
{
    ioctl(fd_, PERF_EVENT_IOC_RESET, 0);
}

void BreakpointCounter::enable()
{
    ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0);
}

void BreakpointCounter::disable()
{
    ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
}

namespace {

__attribute__((noinline)) int probe_target(int x)
{
    asm volatile("" ::: "memory");
    return x + 1;
}

} // namespace

BreakpointStatus probe_breakpoints()
{
    BreakpointStatus s;
    try {
        BreakpointCounter counter(0, reinterpret_cast<uint64_t>(&probe_target));
        int v = 0;
        for (int i = 0; i < 1000; i++)
            v = probe_target(v);
        uint64_t n = counter.count();
        s.available = (n == 1000);
        s.description = s.available ? "exact execution counts (1000 of 1000 calls counted)"
                                    : "counted " + std::to_string(n) + " of 1000 calls";
    } catch (const std::system_error& e) {
        s.description = e.what();
    }
    return s;
}

bool breakpoints_work()
{
    static const bool work = probe_breakpoints().available;
    return work;
}

} // namespace rw::perfclock
