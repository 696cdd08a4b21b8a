// Kernel state an output's size depends on, read from procfs when the
// kernel side could not read it (RW_SZ_STATE in bpf/rewind_abi.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

namespace rw {

// The size enum rw_state `state` gives for `key` in thread `tid`'s view of
// the kernel: a BPF map's key or value size from its descriptor's fdinfo, a
// semaphore set's array from /proc/sysvipc/sem as the thread's IPC
// namespace lists it. Nothing if it cannot be read (the descriptor is no
// longer that map, the set is gone, the namespace cannot be joined).
std::optional<uint64_t> read_state_size(pid_t tid, uint32_t state, uint64_t key);

// The parsers, for the unit tests.
struct BpfMapSizes {
    uint32_t type = 0, key_size = 0, value_size = 0;
};
std::optional<BpfMapSizes> parse_bpf_map_fdinfo(std::string_view fdinfo);
// What the kernel copies out of a map for one value (bpf_map_value_size).
uint64_t bpf_map_value_bytes(const BpfMapSizes& map, uint32_t possible_cpus);
std::optional<uint64_t> parse_sysvipc_nsems(std::string_view table, uint64_t semid);

} // namespace rw
