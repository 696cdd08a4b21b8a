#include "init_signals.h"

#include <csignal>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace rw {
namespace {

// Calls `field(name, value)` for each line of /proc/TID/status.
template <typename F> void each_status_field(pid_t tid, F field)
{
    std::ifstream in("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (auto colon = line.find(':'); colon != std::string::npos)
            field(std::string_view(line).substr(0, colon), line.substr(colon + 1));
}

} // namespace

bool is_namespace_init(pid_t tid)
{
    bool init = false;
    each_status_field(tid, [&](std::string_view name, const std::string& value) {
        if (name != "NSpid")
            return;
        std::istringstream levels(value);
        long last = 0, count = 0;
        for (long id; levels >> id; count++)
            last = id;
        init = count > 1 && last == 1;
    });
    return init;
}

bool dropped_by_namespace_init(pid_t tid, int signo)
{
    if (signo == SIGKILL || signo == SIGSTOP || signo < 1 || signo > 64)
        return false;
    uint64_t handled = 0; // caught or ignored
    bool read = false;
    each_status_field(tid, [&](std::string_view name, const std::string& value) {
        if (name != "SigCgt" && name != "SigIgn")
            return;
        try {
            handled |= std::stoull(value, nullptr, 16);
            read = true;
        } catch (const std::exception&) {
        }
    });
    return read && !(handled & (uint64_t(1) << (signo - 1)));
}

bool fault_kills_namespace_init(pid_t tid, int signo)
{
    if (signo < 1 || signo > 64)
        return false;
    uint64_t caught = 0, blocked = 0, ignored = 0;
    bool read = false;
    each_status_field(tid, [&](std::string_view name, const std::string& value) {
        uint64_t* into = name == "SigCgt"   ? &caught
                         : name == "SigBlk" ? &blocked
                         : name == "SigIgn" ? &ignored
                                            : nullptr;
        if (!into)
            return;
        try {
            *into = std::stoull(value, nullptr, 16);
            read = true;
        } catch (const std::exception&) {
        }
    });
    uint64_t bit = uint64_t(1) << (signo - 1);
    return read && (!(caught & bit) || (blocked & bit) || (ignored & bit));
}

} // namespace rw
