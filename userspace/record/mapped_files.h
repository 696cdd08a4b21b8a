// Copies of the files a recorded program maps, made while it cannot touch
// them (stopped at exec, or stalled right after its mmap).
#pragma once

#include <sys/stat.h>
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
    // stall while the program cannot use it yet), reported to the hook
    // each time with an openable path (/proc/self/fd/N, /proc/TID/fd/N or
    // a map_files entry) and the file as the trace knows it. Whether a file
    // is watched is asked once, when it is first copied. rewind record
    // --parallel probes libc in each process that maps it; every recording
    // plants int3s on the rdrand/rdseed instructions of the code it maps.
    using WatchTest = std::function<bool(const FileRef& file, int fd)>;
    using MappingHook = std::function<void(pid_t tid, const std::string& open_path, const FileRef& file)>;
    void watch_mappings(WatchTest which, MappingHook hook) { watches_.push_back({std::move(which), std::move(hook)}); }

private:
    using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t>;
    struct Watch {
        WatchTest which;
        MappingHook hook;
    };
    struct Known {
        FileRef ref;
        std::vector<size_t> watches; // indexes into watches_
    };
    // Stores the file open at `fd` (a regular file), decides which watches
    // want it, and tells the kernel side to stop at its mappings if any do.
    Known& store_open_file(int fd, const std::string& path);
    void report_mapping(const Known& file, pid_t tid, const std::string& open_path);
    FileStore& store_;
    BpfCapture& capture_;
    std::map<Key, Known> known_;
    std::vector<std::string> problems_;
    std::vector<Watch> watches_;
};

// A file's modification time in nanoseconds, and its identity as the kernel
// side sees it (dev_t in the kernel's encoding).
int64_t mtime_ns(const struct stat& st);
rw_file_identity kernel_identity(const struct stat& st);

// dev_t as the kernel keeps it internally vs as stat() reports it.
uint64_t kernel_dev_to_user(uint64_t kdev);
uint64_t user_dev_to_kernel(uint64_t dev);

} // namespace rw
