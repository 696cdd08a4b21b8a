#include "process_image.h"

#include <sys/sysmacros.h>

#include <elf.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tracee.h"

namespace rw {

std::optional<uint64_t> InitialStack::aux(uint64_t key) const
{
    for (size_t i = 0; i + 1 < auxv.size(); i += 2)
        if (auxv[i] == key)
            return auxv[i + 1];
    return std::nullopt;
}

namespace {

constexpr size_t kMaxStrings = 1 << 20;
constexpr size_t kMaxStringBytes = 1 << 20;

// Reads a NULL-terminated array of string pointers; `addr` ends past the NULL.
std::optional<std::vector<std::string>> read_string_array(const TraceeMemory& mem, uint64_t& addr)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < kMaxStrings; i++, addr += 8) {
        auto ptr = mem.read_value<uint64_t>(RemoteAddr(addr));
        if (!ptr)
            return std::nullopt;
        if (*ptr == 0) {
            addr += 8;
            return out;
        }
        auto s = mem.read_string(RemoteAddr(*ptr), kMaxStringBytes);
        if (!s)
            return std::nullopt;
        out.push_back(std::move(*s));
    }
    return std::nullopt;
}

} // namespace

std::optional<InitialStack> read_initial_stack(const TraceeMemory& mem, uint64_t sp)
{
    InitialStack st;
    auto argc = mem.read_value<uint64_t>(RemoteAddr(sp));
    if (!argc)
        return std::nullopt;
    uint64_t addr = sp + 8;
    auto argv = read_string_array(mem, addr);
    if (!argv || argv->size() != *argc)
        return std::nullopt;
    auto envp = read_string_array(mem, addr);
    if (!envp)
        return std::nullopt;
    st.argv = std::move(*argv);
    st.envp = std::move(*envp);
    st.auxv_addr = addr;
    for (int i = 0; i < 256; i++, addr += 16) {
        auto key = mem.read_value<uint64_t>(RemoteAddr(addr));
        auto value = mem.read_value<uint64_t>(RemoteAddr(addr + 8));
        if (!key || !value)
            return std::nullopt;
        if (*key == AT_NULL)
            return st;
        st.auxv.push_back(*key);
        st.auxv.push_back(*value);
    }
    return std::nullopt;
}

namespace {

// Each line of /proc/PID/maps, with the device and inode of what it maps.
template <typename Visit> void each_mapping(pid_t pid, Visit visit)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string range, perms, offset, dev, inode;
        ls >> range >> perms >> offset >> dev >> inode;
        Mapping m;
        auto dash = range.find('-');
        auto colon = dev.find(':');
        if (dash == std::string::npos || colon == std::string::npos)
            continue;
        m.start = std::stoull(range.substr(0, dash), nullptr, 16);
        m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
        m.perms = perms;
        m.offset = std::stoull(offset, nullptr, 16);
        std::getline(ls, m.path);
        auto first = m.path.find_first_not_of(' ');
        m.path = first == std::string::npos ? "" : m.path.substr(first);
        uint64_t device =
            makedev(std::stoul(dev.substr(0, colon), nullptr, 16), std::stoul(dev.substr(colon + 1), nullptr, 16));
        visit(std::move(m), device, std::stoull(inode));
    }
}

} // namespace

std::vector<Mapping> read_mappings(pid_t pid)
{
    std::vector<Mapping> out;
    each_mapping(pid, [&](Mapping m, uint64_t, uint64_t) { out.push_back(std::move(m)); });
    return out;
}

std::vector<SharedMapping> read_shared_writable_mappings(pid_t pid)
{
    std::vector<SharedMapping> out;
    each_mapping(pid, [&](Mapping m, uint64_t dev, uint64_t ino) {
        if (m.perms.size() >= 4 && m.perms[1] == 'w' && m.perms[3] == 's')
            out.push_back({std::move(m), dev, ino});
    });
    return out;
}

std::vector<pid_t> task_ids(pid_t pid)
{
    std::vector<pid_t> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
        out.push_back(static_cast<pid_t>(std::strtol(e.path().filename().c_str(), nullptr, 10)));
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<long> proc_status_number(pid_t pid, std::string_view field)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line))
        if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 && line[field.size()] == ':')
            return std::stol(line.substr(field.size() + 1));
    return std::nullopt;
}

bool in_uprobes_page(const std::vector<Mapping>& mappings, uint64_t rip)
{
    for (const Mapping& m : mappings)
        if (m.path == "[uprobes]" && rip >= m.start && rip < m.end)
            return true;
    return false;
}

} // namespace rw
