// A process image right after execve: its initial stack (argv, envp, auxv)
// and its mappings.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "event.h"

namespace rw {

class TraceeMemory;

struct InitialStack {
    std::vector<std::string> argv;
    std::vector<std::string> envp;
    std::vector<uint64_t> auxv; // key/value pairs, terminating AT_NULL excluded
    uint64_t auxv_addr = 0;     // address of the first auxv key
    std::optional<uint64_t> aux(uint64_t key) const;
};

// Reads the stack the kernel built at `sp` (argc, argv[], envp[], auxv[]).
std::optional<InitialStack> read_initial_stack(const TraceeMemory& mem, uint64_t sp);

// /proc/PID/maps, parsed.
std::vector<Mapping> read_mappings(pid_t pid);
// A writable mapping shared with whatever else maps its object (a file
// mapped MAP_SHARED, shared anonymous memory, a System V segment), known by
// the device and inode of that object.
struct SharedMapping {
    Mapping mapping;
    uint64_t dev = 0;
    uint64_t ino = 0;
};
std::vector<SharedMapping> read_shared_writable_mappings(pid_t pid);
// Readable, writable and private ("rw?p"): written, its pages are the
// process's own copies (not the file's, not shared with another process).
inline bool private_writable(const Mapping& m)
{
    return m.perms.size() >= 4 && m.perms[0] == 'r' && m.perms[1] == 'w' && m.perms[3] == 'p';
}
// In the kernel's page for uprobes (the uretprobe trampoline, the slots
// where probed instructions are stepped out of line), which replay has not.
bool in_uprobes_page(const std::vector<Mapping>& mappings, uint64_t rip);

// The ids of process `pid`'s threads (/proc/PID/task), in order; empty
// once it is gone.
std::vector<pid_t> task_ids(pid_t pid);

// A number from /proc/PID/status ("Tgid", "PPid", ...); nothing once the
// task is gone.
std::optional<long> proc_status_number(pid_t pid, std::string_view field);

} // namespace rw
