#include "env_scrub.h"

namespace rw {

std::string EnvScrub::apply(const std::string& entry) const
{
    size_t eq = entry.find('=');
    if (eq == std::string::npos || !names_.count(entry.substr(0, eq)))
        return entry;
    return entry.substr(0, eq + 1) + std::string(entry.size() - eq - 1, '*');
}

void EnvScrub::apply(std::vector<std::string>& envp) const
{
    for (auto& e : envp)
        e = apply(e);
}

} // namespace rw
