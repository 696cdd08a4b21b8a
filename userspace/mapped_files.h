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

    // Called for each file the recording meets for the first time, while the
    // program that maps it waits, with a descriptor of ours open on it (so
    // the kernel can be given /proc/self/fd/N) and its path in the program.
    using NewFileHook = std::function<void(int fd, const std::string& path)>;
    void on_new_file(NewFileHook hook) { new_file_ = std::move(hook); }

private:
    using Key = std::tuple<uint64_t, uint64_t, int64_t, int64_t>;
    // Stores the file open at `fd` (a regular file) and tells the kernel side.
    std::string store_open_file(int fd, std::string& path_out);
    FileStore& store_;
    BpfCapture& capture_;
    std::map<Key, FileRef> known_;
    std::vector<std::string> problems_;
    NewFileHook new_file_;
};

// dev_t as the kernel keeps it internally vs as stat() reports it.
uint64_t kernel_dev_to_user(uint64_t kdev);
uint64_t user_dev_to_kernel(uint64_t dev);

} // namespace rw
