// Facts about the machine a recording is made on, and what this process may do.
#pragma once

#include <string>
#include <vector>

namespace rw {

struct KernelInfo {
    std::string release;
    std::string version;
    std::string machine;
};

struct CpuInfo {
    std::string vendor;
    std::string model_name;
    int family = 0;
    int model = 0;
    int stepping = 0;
    std::vector<std::string> flags;
    bool has(const std::string& flag) const;
};

KernelInfo kernel_info();
CpuInfo cpu_info();
std::string host_name();

// Linux capability numbers rewind needs.
enum class Capability : int { SysPtrace = 19, SysAdmin = 21, SysResource = 24, Perfmon = 38, Bpf = 39 };
std::string_view capability_name(Capability cap);
bool has_capability(Capability cap);

inline constexpr const char* kKernelBtfPath = "/sys/kernel/btf/vmlinux";
bool kernel_has_btf();

// Capabilities needed to record that this process lacks (empty when all are there).
std::vector<Capability> missing_record_capabilities();

} // namespace rw
