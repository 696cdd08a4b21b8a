// One CPU for the replay: see cpu_pin.h.
#include "cpu_pin.h"

#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace rw::replay {

std::string pin_replay_cpu()
{
    const char* choice = std::getenv("REWIND_REPLAY_CPU");
    std::string how = choice ? choice : "auto";
    if (how == "any")
        return "not pinned (REWIND_REPLAY_CPU=any)";
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return "not pinned (sched_getaffinity failed)";
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &allowed))
            cpus.push_back(c);
    if (cpus.size() <= 1)
        return "already on one CPU";
    int cpu = cpus[static_cast<size_t>(getpid()) % cpus.size()];
    if (how != "auto") {
        char* end = nullptr;
        long wanted = std::strtol(how.c_str(), &end, 10);
        if (end == how.c_str() || *end != '\0' || wanted < 0 || wanted >= CPU_SETSIZE ||
            !CPU_ISSET(static_cast<int>(wanted), &allowed))
            return "not pinned (REWIND_REPLAY_CPU=" + how + " is not a CPU this process may use)";
        cpu = static_cast<int>(wanted);
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0)
        return "not pinned (sched_setaffinity failed)";
    return "pinned to CPU " + std::to_string(cpu);
}

} // namespace rw::replay
