// Copies of the files a recorded program maps, made while it cannot touch
// them (stopped at exec, or stalled right after its mmap).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "event.h"
#include "event_assembler.h"

namespace rw {

class BpfCapture;
class FileStore;

class MappedFiles : public MappedFileResolver {
public:
    MappedFiles(FileStore& store, BpfCapture& capture) : store_(store), capture_(capture) {}

    FileRef resolve(Tid tid, int fd, const rw_file_identity& identity) override;

    // Stores every file mapping of `pid` and fills in their content hashes.
    void store_mappings(pid_t pid, std::vector<Mapping>& mappings);

    const std::vector<std::string>& problems() const { return problems_; }

    // Files the kernel side stops the program at every mapping of (a
    // stall while the program cannot use it yet), reported to `on_mapping`
    // each time with an openable path (/proc/self/fd/N or /proc/TID/fd/N)
    // and the path the program used: rewind record --parallel probes libc
    // in each process that maps it.
    using MappingHook = std::function<void(pid_t tid, const std::string& open_path, const std::string& path)>;
    void watch_mappings(std::function<bool(const std::string& path)> which, MappingHook hook)
    {
        watched_ = std::move(which);
        on_mapping_ = std::move(hook);
    }

private:
    using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t>;
    // Stores the file open at `fd` (a regular file) and tells the kernel side.
    std::string store_open_file(int fd, std::string& path_out);
    bool watched(const std::string& path) const { return watched_ && watched_(path); }
    FileStore& store_;
    BpfCapture& capture_;
    std::map<Key, FileRef> known_;
    std::vector<std::string> problems_;
    std::function<bool(const std::string& path)> watched_;
    MappingHook on_mapping_;
};

// dev_t as the kernel keeps it internally vs as stat() reports it.
uint64_t kernel_dev_to_user(uint64_t kdev);
uint64_t user_dev_to_kernel(uint64_t dev);

} // namespace rw
