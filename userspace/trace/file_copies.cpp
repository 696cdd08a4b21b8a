#include "file_copies.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "bytes.h"
#include "file_store.h"
#include "positional_io.h"
#include "trace_dir.h"
#include "trace_file.h"

namespace rw {

std::filesystem::path FileCopies::path_of(const std::string& content_hash) const
{
    if (!is_content_hash(content_hash))
        // (Not quoted: no message shows what a trace file holds.)
        throw FormatError("the trace names a file copy by a name of " + std::to_string(content_hash.size()) +
                          " bytes that is not a content hash (a damaged or crafted trace)");
    return trace_dir_ / trace_files::kFiles / content_hash;
}

UniqueFd FileCopies::open_copy(const std::string& content_hash, std::string& why) const
{
    path_of(content_hash); // the name is checked before it is opened
    try {
        return open_trace_file(trace_dir_, std::filesystem::path(trace_files::kFiles) / content_hash);
    } catch (const TraceFileError& e) {
        why = "the trace's copy " + content_hash + " cannot be read: " + e.what();
        return {};
    }
}

std::filesystem::path FileCopies::verified(const std::string& content_hash, std::string& why)
{
    std::lock_guard lock(mutex_);
    return verified_locked(content_hash, why);
}

UniqueFd FileCopies::open_verified(const std::string& content_hash, std::string& why)
{
    std::lock_guard lock(mutex_);
    if (verified_locked(content_hash, why).empty())
        return {};
    return open_copy(content_hash, why);
}

std::filesystem::path FileCopies::verified_locked(const std::string& content_hash, std::string& why)
{
    std::filesystem::path copy = path_of(content_hash);
    if (verified_.count(content_hash))
        return copy;
    UniqueFd fd = open_copy(content_hash, why);
    if (!fd)
        return {};
    try {
        std::string actual = FileStore::hash_open_file(fd.get());
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
        UniqueFd fd;
        if (!verified_locked(content_hash, why).empty())
            fd = open_copy(content_hash, why);
        struct stat st {};
        if (!fd)
            throw FormatError("a read recorded from a file: " + why);
        if (::fstat(fd.get(), &st) != 0)
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
