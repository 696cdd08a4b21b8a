#include "fork_advice.h"

#include <fstream>
#include <sstream>
#include <string>

namespace rw::replay {

std::vector<ForkAdvice> fork_advice(pid_t pid)
{
    std::vector<ForkAdvice> found;
    std::ifstream smaps("/proc/" + std::to_string(pid) + "/smaps");
    std::string line;
    ForkAdvice current;
    while (std::getline(smaps, line)) {
        // A mapping's first line starts with its range ("start-end perms …");
        // its VmFlags line comes last.
        size_t dash = line.find('-');
        size_t space = line.find(' ');
        if (dash != std::string::npos && space != std::string::npos && dash < space &&
            line.find_first_not_of("0123456789abcdef") == dash) {
            current = ForkAdvice{std::stoull(line.substr(0, dash), nullptr, 16),
                                 std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16)};
            continue;
        }
        if (line.rfind("VmFlags:", 0) != 0)
            continue;
        std::istringstream flags(line.substr(8));
        std::string flag;
        while (flags >> flag) {
            current.wipe |= flag == "wf";
            current.dont_copy |= flag == "dc";
        }
        if (current.wipe || current.dont_copy)
            found.push_back(current);
    }
    return found;
}

} // namespace rw::replay
