#include "file_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <system_error>
#include <vector>

namespace rw {

bool is_content_hash(const std::string& name)
{
    return name.size() == 32 && std::all_of(name.begin(), name.end(),
                                            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

namespace {

std::string hex128(XXH128_hash_t h)
{
    char buf[33];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
}

struct HashState {
    XXH3_state_t* state = XXH3_createState();
    HashState() { XXH3_128bits_reset(state); }
    ~HashState() { XXH3_freeState(state); }
    void update(const void* p, size_t n) { XXH3_128bits_update(state, p, n); }
};

void write_all(int out, const char* p, size_t n, off_t at)
{
    for (size_t done = 0; done < n;) {
        ssize_t w = ::pwrite(out, p + done, n - done, at + static_cast<off_t>(done));
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            throw std::system_error(errno, std::generic_category(), "writing a file copy");
        done += static_cast<size_t>(w);
    }
}

// Copies and hashes [from, to) of `in` (to < 0: up to its end, which a
// file still being written moves); returns where it ended.
off_t copy_range(int in, int out, HashState& h, std::vector<char>& buf, off_t from, off_t to, uint64_t& written)
{
    off_t offset = from;
    while (to < 0 || offset < to) {
        size_t want = to < 0 ? buf.size() : std::min<size_t>(buf.size(), static_cast<size_t>(to - offset));
        ssize_t n = ::pread(in, buf.data(), want, offset);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw std::system_error(errno, std::generic_category(), "reading a mapped file");
        if (n == 0)
            break;
        h.update(buf.data(), static_cast<size_t>(n));
        if (out >= 0)
            write_all(out, buf.data(), static_cast<size_t>(n), offset);
        written += static_cast<uint64_t>(n);
        offset += n;
    }
    return offset;
}

// Streams `in` to `out` (if out >= 0) while hashing its content. Holes (a
// sparse file: 100 GB with two pages written) are neither read nor written:
// they hash as the zeros they read as, and the copy has them as holes too.
// `copied`: the bytes of data copied.
std::string copy_and_hash(int in, int out, uint64_t& copied)
{
    HashState h;
    std::vector<char> buf(1 << 20);
    static const std::vector<char> zeros(1 << 20);
    copied = 0;
    struct stat st {};
    off_t size = ::fstat(in, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0;
    off_t offset = 0;
    while (offset < size) {
        off_t data = ::lseek(in, offset, SEEK_DATA);
        if (data < 0)
            data = errno == ENXIO ? size : offset; // (no more data; or no hole support: all data)
        data = std::min(data, size);
        for (off_t z = offset; z < data;) {
            size_t n = static_cast<size_t>(std::min<off_t>(data - z, static_cast<off_t>(zeros.size())));
            h.update(zeros.data(), n);
            z += static_cast<off_t>(n);
        }
        offset = data;
        if (offset >= size)
            break;
        off_t hole = ::lseek(in, offset, SEEK_HOLE);
        if (hole < 0 || hole > size)
            hole = size;
        off_t reached = copy_range(in, out, h, buf, offset, hole, copied);
        if (reached < hole) { // it shrank meanwhile: what is left of it is all there is
            size = reached;
            break;
        }
        offset = hole;
    }
    // What a file still being written has grown by since.
    offset = copy_range(in, out, h, buf, size, -1, copied);
    if (out >= 0 && ::ftruncate(out, offset) != 0)
        throw std::system_error(errno, std::generic_category(), "writing a file copy");
    return hex128(XXH3_128bits_digest(h.state));
}

} // namespace

FileStore::Identity FileStore::identity_of(const struct stat& st)
{
    return {st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
}

bool FileStore::contains(const std::string& hash) const
{
    return ::access(path_of(hash).c_str(), F_OK) == 0;
}

std::string FileStore::store_fd(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "fstat of a mapped file");
    Identity id = identity_of(st);
    if (auto it = known_.find(id); it != known_.end())
        return it->second;

    auto tmp = dir_ / (".incoming." + std::to_string(::getpid()));
    int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0)
        throw std::system_error(errno, std::generic_category(), "creating " + tmp.string());
    uint64_t copied = 0;
    std::string hash;
    try {
        hash = copy_and_hash(fd, out, copied);
    } catch (...) {
        ::close(out);
        ::unlink(tmp.c_str());
        throw;
    }
    ::close(out);
    if (contains(hash)) {
        ::unlink(tmp.c_str());
    } else {
        std::filesystem::rename(tmp, path_of(hash));
        bytes_stored_ += copied; // (data: holes take no room)
        files_stored_++;
    }
    known_[id] = hash;
    return hash;
}

std::string FileStore::store_fd_rehashed(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "fstat of a file to copy");
    Identity id = identity_of(st);
    if (auto it = known_.find(id); it != known_.end()) {
        uint64_t n = 0;
        if (copy_and_hash(fd, -1, n) == it->second && contains(it->second))
            return it->second;
        known_.erase(it);
    }
    return store_fd(fd);
}

std::string FileStore::store_path(const std::filesystem::path& path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "opening " + path.string());
    try {
        std::string h = store_fd(fd);
        ::close(fd);
        return h;
    } catch (...) {
        ::close(fd);
        throw;
    }
}

std::string FileStore::hash_file(const std::filesystem::path& path)
{
    // Never through a symbolic link, and never blocked by a FIFO: only a
    // regular file is hashed (a trace's copies are untrusted input).
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "opening " + path.string());
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw std::system_error(EINVAL, std::generic_category(), path.string() + " is not a regular file");
    }
    uint64_t n = 0;
    std::string h;
    try {
        h = copy_and_hash(fd, -1, n);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return h;
}

std::string FileStore::hash_open_file(int fd)
{
    uint64_t n = 0;
    return copy_and_hash(fd, -1, n);
}

std::string FileStore::copy_open_file(int in, int out)
{
    uint64_t n = 0;
    return copy_and_hash(in, out, n);
}

} // namespace rw
