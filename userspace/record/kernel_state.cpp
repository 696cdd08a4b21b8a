#include "kernel_state.h"

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "rewind_abi.h"

namespace rw {
namespace {

std::optional<std::string> slurp(const std::string& path)
{
    std::ifstream in(path);
    if (!in)
        return std::nullopt;
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

std::optional<uint64_t> field(std::string_view text, std::string_view name)
{
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        std::string_view line = text.substr(at, end == std::string_view::npos ? end : end - at);
        at = end == std::string_view::npos ? text.size() : end + 1;
        if (line.size() <= name.size() || line.substr(0, name.size()) != name || line[name.size()] != ':')
            continue;
        try {
            return std::stoull(std::string(line.substr(name.size() + 1)));
        } catch (const std::exception&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

bool same_ipc_namespace(pid_t tid)
{
    struct stat mine {
    }, theirs{};
    return ::stat("/proc/self/ns/ipc", &mine) == 0 &&
           ::stat(("/proc/" + std::to_string(tid) + "/ns/ipc").c_str(), &theirs) == 0 && mine.st_ino == theirs.st_ino &&
           mine.st_dev == theirs.st_dev;
}

// /proc/sysvipc lists the IPC namespace of the thread that opens it. For a
// thread in another one (a container), a thread of ours joins that
// namespace for the time of the read; the namespace is a thread's own, so
// the rest of the recorder stays where it is.
std::optional<std::string> slurp_in_ipc_namespace_of(pid_t tid, const std::string& path)
{
    if (same_ipc_namespace(tid))
        return slurp(path);
    int ns = ::open(("/proc/" + std::to_string(tid) + "/ns/ipc").c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0)
        return std::nullopt;
    std::optional<std::string> text;
    std::thread reader([&] {
        if (::setns(ns, CLONE_NEWIPC) == 0)
            text = slurp(path);
    });
    reader.join();
    ::close(ns);
    return text;
}

} // namespace

std::optional<BpfMapSizes> parse_bpf_map_fdinfo(std::string_view fdinfo)
{
    auto type = field(fdinfo, "map_type"), key = field(fdinfo, "key_size"), value = field(fdinfo, "value_size");
    if (!type || !key || !value)
        return std::nullopt;
    return BpfMapSizes{static_cast<uint32_t>(*type), static_cast<uint32_t>(*key), static_cast<uint32_t>(*value)};
}

uint64_t bpf_map_value_bytes(const BpfMapSizes& map, uint32_t possible_cpus)
{
    // The kernel's map types (uapi/linux/bpf.h), as bpf_map_value_size
    // sorts them: a slot for every possible CPU, or a descriptor's id.
    switch (map.type) {
    case 5:  // BPF_MAP_TYPE_PERCPU_HASH
    case 6:  // BPF_MAP_TYPE_PERCPU_ARRAY
    case 10: // BPF_MAP_TYPE_LRU_PERCPU_HASH
    case 21: // BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE
        return ((uint64_t(map.value_size) + 7) & ~uint64_t(7)) * possible_cpus;
    case 3:  // BPF_MAP_TYPE_PROG_ARRAY
    case 4:  // BPF_MAP_TYPE_PERF_EVENT_ARRAY
    case 8:  // BPF_MAP_TYPE_CGROUP_ARRAY
    case 12: // BPF_MAP_TYPE_ARRAY_OF_MAPS
    case 13: // BPF_MAP_TYPE_HASH_OF_MAPS
        return 4;
    default:
        return map.value_size;
    }
}

std::optional<uint64_t> parse_sysvipc_nsems(std::string_view table, uint64_t semid)
{
    // "key semid perms nsems uid gid ...", a header line first.
    std::istringstream in{std::string(table)};
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        long long key = 0;
        unsigned long long id = 0, nsems = 0;
        unsigned perms = 0;
        if ((fields >> key >> id >> perms >> nsems) && id == semid)
            return nsems;
    }
    return std::nullopt;
}

std::optional<uint64_t> read_state_size(pid_t tid, uint32_t state, uint64_t key)
{
    switch (state) {
    case RW_STATE_BPF_KEY:
    case RW_STATE_BPF_VALUE: {
        auto text = slurp("/proc/" + std::to_string(tid) + "/fdinfo/" + std::to_string(key));
        auto map = text ? parse_bpf_map_fdinfo(*text) : std::nullopt;
        if (!map)
            return std::nullopt;
        if (state == RW_STATE_BPF_KEY)
            return map->key_size;
        int cpus = libbpf_num_possible_cpus();
        if (cpus <= 0)
            return std::nullopt;
        return bpf_map_value_bytes(*map, static_cast<uint32_t>(cpus));
    }
    case RW_STATE_SEM_NSEMS: {
        auto text = slurp_in_ipc_namespace_of(tid, "/proc/sysvipc/sem");
        auto nsems = text ? parse_sysvipc_nsems(*text, key) : std::nullopt;
        if (!nsems)
            return std::nullopt;
        return *nsems * 2; // unsigned short each
    }
    default:
        return std::nullopt;
    }
}

} // namespace rw
