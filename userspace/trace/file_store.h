// The trace's copies of mapped files, stored by content hash (xxh3-128), so
// replay maps exactly the bytes the program mapped even after the originals
// change or vanish.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

namespace rw {

// Whether `name` is a content hash as the file store writes it.
bool is_content_hash(const std::string& name);

class FileStore {
public:
    explicit FileStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

    // Copies the file open at `fd` (unless an identical copy is stored) and
    // returns its content hash. Identity (dev, inode, size, mtime) is cached
    // so a library mapped many times is hashed once.
    std::string store_fd(int fd);
    // The same, but content already stored under the file's identity is
    // hashed again rather than trusted: a file written through a shared
    // mapping can change without a new mtime.
    std::string store_fd_rehashed(int fd);
    std::string store_path(const std::filesystem::path& path);

    // Whether a copy was stored from a file of this identity (dev as stat
    // reports it).
    bool holds(uint64_t dev, uint64_t ino, int64_t size, int64_t mtime_ns) const
    {
        return known_.count({dev, ino, size, mtime_ns}) != 0;
    }

    std::filesystem::path path_of(const std::string& hash) const { return dir_ / hash; }
    bool contains(const std::string& hash) const;
    uint64_t bytes_stored() const { return bytes_stored_; }
    uint64_t files_stored() const { return files_stored_; }

    // Hash of a regular file's content, without storing it (throws
    // std::system_error for anything else, a symbolic link included).
    static std::string hash_file(const std::filesystem::path& path);
    // Hash of the content of the file open at `fd`, from its start.
    static std::string hash_open_file(int fd);
    // Copies the content of the file open at `in` into the empty file open
    // at `out` (holes stay holes) and returns its hash.
    static std::string copy_open_file(int in, int out);

private:
    using Identity = std::tuple<uint64_t, uint64_t, int64_t, int64_t>;
    static Identity identity_of(const struct stat& st);
    std::filesystem::path dir_;
    std::map<Identity, std::string> known_;
    uint64_t bytes_stored_ = 0;
    uint64_t files_stored_ = 0;
};

} // namespace rw
