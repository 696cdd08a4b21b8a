#include "init_signals.h"

#include <csignal>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

namespace rw {

bool dropped_by_namespace_init(pid_t tid, int signo)
{
    if (signo == SIGKILL || signo == SIGSTOP || signo < 1 || signo > 64)
        return false;
    // One read of the status file: this runs at every signal delivery.
    std::ifstream in("/proc/" + std::to_string(tid) + "/status");
    std::string line;
    bool init = false;
    uint64_t handled = 0; // caught or ignored
    auto value = [&](std::string_view field) -> std::optional<std::string> {
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
            return line.substr(field.size() + 1);
        return std::nullopt;
    };
    while (std::getline(in, line)) {
        if (auto ids = value("NSpid")) {
            std::istringstream levels(*ids);
            long last = 0, count = 0;
            for (long id; levels >> id; count++)
                last = id;
            init = count > 1 && last == 1;
        } else if (auto set = value("SigIgn"); set || (set = value("SigCgt"))) {
            try {
                handled |= std::stoull(*set, nullptr, 16);
            } catch (const std::exception&) {
                return false;
            }
        }
    }
    return init && !(handled & (uint64_t(1) << (signo - 1)));
}

} // namespace rw
