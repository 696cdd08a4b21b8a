#include "system_info.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace rw {

bool CpuInfo::has(const std::string& flag) const
{
    return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

KernelInfo kernel_info()
{
    struct utsname u {};
    uname(&u);
    return {u.release, u.version, u.machine};
}

CpuInfo cpu_info()
{
    CpuInfo cpu;
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty())
            break; // first processor only
        auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
        std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
        if (key == "vendor_id")
            cpu.vendor = value;
        else if (key == "model name")
            cpu.model_name = value;
        else if (key == "cpu family")
            cpu.family = std::atoi(value.c_str());
        else if (key == "model")
            cpu.model = std::atoi(value.c_str());
        else if (key == "stepping")
            cpu.stepping = std::atoi(value.c_str());
        else if (key == "flags") {
            std::istringstream words(value);
            std::string w;
            while (words >> w)
                cpu.flags.push_back(w);
        }
    }
    return cpu;
}

std::string host_name()
{
    char buf[256] = {};
    gethostname(buf, sizeof(buf) - 1);
    return buf;
}

std::string_view capability_name(Capability cap)
{
    switch (cap) {
    case Capability::SysPtrace:
        return "CAP_SYS_PTRACE";
    case Capability::SysAdmin:
        return "CAP_SYS_ADMIN";
    case Capability::SysResource:
        return "CAP_SYS_RESOURCE";
    case Capability::Perfmon:
        return "CAP_PERFMON";
    case Capability::Bpf:
        return "CAP_BPF";
    }
    return "?";
}

bool has_capability(Capability cap)
{
    std::ifstream in("/proc/self/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("CapEff:", 0) == 0) {
            uint64_t mask = std::stoull(line.substr(7), nullptr, 16);
            return mask & (uint64_t(1) << static_cast<int>(cap));
        }
    }
    return false;
}

bool kernel_has_btf()
{
    return access(kKernelBtfPath, R_OK) == 0;
}

std::vector<Capability> missing_record_capabilities()
{
    std::vector<Capability> missing;
    // CAP_SYS_ADMIN covers BPF and perf on kernels that predate the split.
    bool admin = has_capability(Capability::SysAdmin);
    for (Capability c : {Capability::Bpf, Capability::Perfmon, Capability::SysPtrace})
        if (!has_capability(c) && !(admin && c != Capability::SysPtrace))
            missing.push_back(c);
    return missing;
}

} // namespace rw
