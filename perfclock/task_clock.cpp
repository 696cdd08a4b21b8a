#include "task_clock.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

namespace rw::perfclock {

TaskClock::TaskClock(pid_t tid, std::optional<std::chrono::nanoseconds> alarm_every, uint64_t tag)
{
    struct perf_event_attr attr {};
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    if (alarm_every) {
        // The kernel's timer for this event does not go below 10 us.
        attr.sample_period = static_cast<uint64_t>(std::max<int64_t>(alarm_every->count(), 10'000));
        attr.sigtrap = 1;
        attr.sig_data = tag;
        attr.remove_on_exec = 1; // (required with sigtrap)
    }
    fd_ = static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd_ < 0)
        throw std::system_error(errno, std::generic_category(), "perf_event_open(task-clock)");
}

TaskClock::~TaskClock()
{
    if (fd_ >= 0)
        close(fd_);
}

std::chrono::nanoseconds TaskClock::elapsed() const
{
    uint64_t v = 0;
    if (read(fd_, &v, sizeof(v)) != sizeof(v))
        throw std::system_error(errno, std::generic_category(), "reading a task clock");
    return std::chrono::nanoseconds(static_cast<int64_t>(v));
}

bool task_clock_works()
{
    static const bool works = [] {
        try {
            TaskClock probe(0, std::chrono::milliseconds(1000), 0);
            return true;
        } catch (const std::system_error&) {
            return false;
        }
    }();
    return works;
}

bool try_start_task_clock(std::optional<TaskClock>& into, pid_t tid,
                          std::optional<std::chrono::nanoseconds> alarm_every, uint64_t tag)
{
    into.reset();
    if (!task_clock_works())
        return false;
    try {
        into.emplace(tid, alarm_every, tag);
        return true;
    } catch (const std::system_error&) {
        return false;
    }
}

} // namespace rw::perfclock
