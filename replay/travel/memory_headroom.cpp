#include "memory_headroom.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "steady_now.h"

namespace rw::replay {
namespace {

// "Key:   123 kB" lines of /proc/meminfo, in bytes.
std::optional<uint64_t> meminfo(const std::string& text, const std::string& key)
{
    auto at = text.find("\n" + key + ":");
    if (at == std::string::npos)
        return std::nullopt;
    std::istringstream in(text.substr(at + key.size() + 2));
    uint64_t kb = 0;
    if (!(in >> kb))
        return std::nullopt;
    return kb * 1024;
}

std::string read_file(const std::string& path)
{
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::optional<uint64_t> number_in(const std::string& path)
{
    std::string text = read_file(path);
    if (text.empty() || text.compare(0, 3, "max") == 0)
        return std::nullopt;
    try {
        return std::stoull(text);
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// "key value" lines of a cgroup's memory.stat.
uint64_t stat_value(const std::string& text, const std::string& key)
{
    std::istringstream in(text);
    std::string k;
    uint64_t v = 0;
    while (in >> k >> v)
        if (k == key)
            return v;
    return 0;
}

struct CgroupMemory {
    uint64_t limit = 0, used = 0; // used: without page cache, which the kernel reclaims first
};

// The limit of one memory cgroup directory and what it uses apart from page
// cache, if it has a limit (version 1 says "none" with a number near 2^63).
std::optional<CgroupMemory> limited(const std::string& dir, bool v2)
{
    auto limit = number_in(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
    auto usage = number_in(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    if (!limit || !usage || *limit >= (uint64_t(1) << 60))
        return std::nullopt;
    std::string stat = read_file(dir + "/memory.stat");
    uint64_t cache = v2 ? stat_value(stat, "file") : stat_value(stat, "total_cache");
    return CgroupMemory{*limit, *usage - std::min(*usage, cache)};
}

// The memory cgroup, of this process or one it is nested in, that has the
// least left under its limit: version 2 (the "0::" line; a container's
// limit is often on an ancestor) or version 1 (the "memory" controller's
// line, whose usage counts the whole subtree).
std::optional<CgroupMemory> cgroup_memory()
{
    std::istringstream lines(read_file("/proc/self/cgroup"));
    std::string line;
    std::optional<CgroupMemory> tightest;
    auto consider = [&](std::optional<CgroupMemory> c) {
        if (c && (!tightest ||
                  c->limit - std::min(c->limit, c->used) < tightest->limit - std::min(tightest->limit, tightest->used)))
            tightest = std::move(c);
    };
    while (std::getline(lines, line)) {
        auto first = line.find(':'), second = line.find(':', first + 1);
        if (first == std::string::npos || second == std::string::npos)
            continue;
        std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
        bool v2 = line.compare(0, first, "0") == 0 && controllers.empty();
        bool v1 = controllers == "memory" || controllers.find("memory,") == 0 ||
                  controllers.find(",memory") != std::string::npos;
        if (!v1 && !v2)
            continue;
        std::string root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
        for (std::string p = path;; p = p.substr(0, p.rfind('/'))) {
            consider(limited(root + p, v2));
            if (p.empty() || p == "/")
                break;
        }
    }
    return tightest;
}

} // namespace

std::optional<MemoryHeadroom> memory_headroom()
{
    std::string info = "\n" + read_file("/proc/meminfo");
    auto total = meminfo(info, "MemTotal"), available = meminfo(info, "MemAvailable");
    if (!total || !available)
        return std::nullopt;
    MemoryHeadroom h{*available, *total};
    if (auto cg = cgroup_memory()) {
        uint64_t left = cg->limit - std::min(cg->limit, cg->used);
        if (cg->limit < h.total || left < h.available)
            h = {std::min(left, h.available), std::min(cg->limit, h.total)};
    }
    return h;
}

bool memory_is_short(const MemoryHeadroom& h, uint64_t reserve)
{
    return h.available < std::max<uint64_t>(h.total / 32, uint64_t(64) << 20) + reserve;
}

bool memory_is_short(uint64_t reserve)
{
    auto h = memory_headroom();
    return h && memory_is_short(*h, reserve);
}

uint64_t anonymous_resident(pid_t pid)
{
    std::string status = "\n" + read_file("/proc/" + std::to_string(pid) + "/status");
    return meminfo(status, "RssAnon").value_or(0);
}

void wait_until_released(const std::vector<pid_t>& pids, std::chrono::milliseconds limit)
{
    auto deadline = steady_now() + limit;
    for (pid_t pid : pids) {
        for (;;) {
            std::string stat = read_file("/proc/" + std::to_string(pid) + "/stat");
            auto close = stat.rfind(')');
            char state = close == std::string::npos || close + 2 >= stat.size() ? 'X' : stat[close + 2];
            if (state == 'Z' || state == 'X' || steady_now() >= deadline)
                break;
            std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
    }
}

} // namespace rw::replay
