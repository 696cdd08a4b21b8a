#include "mapped_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <system_error>

#include "bpf_capture.h"
#include "file_store.h"
#include "unique_fd.h"

namespace rw {

uint64_t kernel_dev_to_user(uint64_t kdev)
{
    return makedev(static_cast<unsigned>(kdev >> 20), static_cast<unsigned>(kdev & 0xfffff));
}

uint64_t user_dev_to_kernel(uint64_t dev)
{
    return (uint64_t(major(dev)) << 20) | minor(dev);
}

int64_t mtime_ns(const struct stat& st)
{
    return st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

rw_file_identity kernel_identity(const struct stat& st)
{
    int64_t ctime_ns = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    return rw_file_identity{user_dev_to_kernel(st.st_dev), st.st_ino, st.st_size, mtime_ns(st), ctime_ns};
}

namespace {

std::string read_link(const std::string& path)
{
    std::error_code ec;
    auto target = std::filesystem::read_symlink(path, ec);
    return ec ? "" : target.string();
}

} // namespace

MappedFiles::Known& MappedFiles::store_open_file(int fd, const std::string& path)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "fstat");
    Known file;
    // Devices (/dev/zero…) have no content to copy; replay recognises them by path.
    std::string hash = S_ISREG(st.st_mode) ? store_.store_fd(fd) : "";
    file.ref = FileRef{st.st_dev, st.st_ino, st.st_size, mtime_ns(st), hash, path};
    if (S_ISREG(st.st_mode))
        for (size_t i = 0; i < watches_.size(); i++)
            if (watches_[i].which(file.ref, fd))
                file.watches.push_back(i);
    if (file.watches.empty())
        capture_.mark_file_known(kernel_identity(st));
    return known_[{st.st_dev, st.st_ino, st.st_size, mtime_ns(st)}] = std::move(file);
}

void MappedFiles::report_mapping(const Known& file, pid_t tid, const std::string& open_path)
{
    for (size_t i : file.watches)
        watches_[i].hook(tid, open_path, file.ref);
}

FileRef MappedFiles::resolve(Tid tid, int fd, const rw_file_identity& id)
{
    Key key{kernel_dev_to_user(id.dev), id.ino, id.size, id.mtime_ns};
    if (auto it = known_.find(key); it != known_.end()) {
        report_mapping(it->second, tid, "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd));
        return it->second.ref;
    }

    FileRef ref{std::get<0>(key), id.ino, id.size, id.mtime_ns, "", ""};
    std::string proc = "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd);
    ref.path = read_link(proc);
    UniqueFd file(::open(proc.c_str(), O_RDONLY | O_CLOEXEC));
    if (file.get() < 0) {
        problems_.push_back("cannot open " + (ref.path.empty() ? proc : ref.path) +
                            " to copy it: " + std::system_category().message(errno));
        return ref;
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || st.st_ino != id.ino || st.st_size != id.size || mtime_ns(st) != id.mtime_ns) {
        problems_.push_back(ref.path + " changed between its mmap and its copy into the trace");
        return ref;
    }
    try {
        const Known& stored = store_open_file(file.get(), ref.path);
        report_mapping(stored, tid, "/proc/self/fd/" + std::to_string(file.get()));
        return stored.ref;
    } catch (const std::exception& e) {
        problems_.push_back("copying " + ref.path + ": " + e.what());
    }
    return ref;
}

void MappedFiles::store_mappings(pid_t pid, std::vector<Mapping>& mappings)
{
    for (auto& m : mappings) {
        if (m.path.empty() || m.path[0] != '/')
            continue;
        char name[64];
        std::snprintf(name, sizeof(name), "%lx-%lx", static_cast<unsigned long>(m.start),
                      static_cast<unsigned long>(m.end));
        std::string proc = "/proc/" + std::to_string(pid) + "/map_files/" + name;
        UniqueFd file(::open(proc.c_str(), O_RDONLY | O_CLOEXEC));
        if (file.get() < 0) {
            problems_.push_back("cannot open the mapping of " + m.path + ": " + std::system_category().message(errno));
            continue;
        }
        try {
            struct stat st {};
            ::fstat(file.get(), &st);
            Key key{st.st_dev, st.st_ino, st.st_size, mtime_ns(st)};
            auto it = known_.find(key);
            const Known& stored = it != known_.end() ? it->second : store_open_file(file.get(), m.path);
            m.content_hash = stored.ref.content_hash;
            report_mapping(stored, pid, proc);
        } catch (const std::exception& e) {
            problems_.push_back("copying " + m.path + ": " + e.what());
        }
    }
}

} // namespace rw
