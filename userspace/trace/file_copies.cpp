#include "file_copies.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "bytes.h"
#include "file_store.h"
#include "positional_io.h"

namespace rw {

std::filesystem::path FileCopies::path_of(const std::string& content_hash) const
{
    if (!is_content_hash(content_hash))
        throw FormatError("the trace names a file copy '" + content_hash +
                          "', which is not a content hash (a damaged or crafted trace)");
    return dir_ / content_hash;
}

std::filesystem::path FileCopies::verified(const std::string& content_hash, std::string& why)
{
    std::lock_guard lock(mutex_);
    return verified_locked(content_hash, why);
}

std::filesystem::path FileCopies::verified_locked(const std::string& content_hash, std::string& why)
{
    std::filesystem::path copy = path_of(content_hash);
    if (verified_.count(content_hash))
        return copy;
    // The store only ever writes regular files: a symbolic link would lead
    // out of the trace, and a FIFO or a device would never end.
    std::error_code ec;
    auto status = std::filesystem::symlink_status(copy, ec);
    if (!ec && status.type() != std::filesystem::file_type::regular) {
        why = "the trace's copy " + content_hash +
              " is not a regular file (a symbolic link, a device or a FIFO is never followed)";
        return {};
    }
    try {
        std::string actual = FileStore::hash_file(copy);
        if (actual != content_hash) {
            why = "the trace's copy " + content_hash + " has been altered (its content hashes to " + actual + ")";
            return {};
        }
    } catch (const std::system_error& e) {
        why = "the trace's copy " + content_hash + " cannot be read: " + e.code().message();
        return {};
    }
    verified_.insert(content_hash);
    return copy;
}

std::vector<uint8_t> FileCopies::read(const std::string& content_hash, uint64_t offset, uint64_t length)
{
    std::lock_guard lock(mutex_);
    auto it = open_.find(content_hash);
    if (it == open_.end()) {
        std::string why;
        std::filesystem::path copy = verified_locked(content_hash, why);
        if (copy.empty())
            throw FormatError("a read recorded from a file: " + why);
        UniqueFd fd(::open(copy.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0)
            throw FormatError("a read recorded from a file: the trace's copy " + content_hash +
                              " cannot be opened: " + std::strerror(errno));
        it = open_.emplace(content_hash, Open{std::move(fd), static_cast<uint64_t>(st.st_size)}).first;
    }
    // Sized when opened: a read per event should not cost an fstat too.
    uint64_t size = it->second.size;
    std::vector<uint8_t> bytes;
    if (offset <= size && length <= size - offset) {
        bytes.resize(length);
        if (pread_full(it->second.fd.get(), bytes.data(), length, offset) == static_cast<ssize_t>(length))
            return bytes;
    }
    throw FormatError("a read recorded from a file: the trace's copy " + content_hash + " holds no " +
                      std::to_string(length) + " bytes at offset " + std::to_string(offset));
}

} // namespace rw
