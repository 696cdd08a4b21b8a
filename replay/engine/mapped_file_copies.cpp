#include "mapped_file_copies.h"

#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "file_store.h"
#include "positional_io.h"

namespace rw::replay {

namespace {

std::vector<uint8_t> read_whole(int fd)
{
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        throw std::system_error(errno, std::generic_category(), "stat of a mapped file's copy");
    std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
    if (pread_full(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        throw std::system_error(errno, std::generic_category(), "reading a mapped file's copy");
    return bytes;
}

// Makes `fd`'s file hold `bytes`, in place: the mappings of it see the change.
void overwrite(int fd, const std::vector<uint8_t>& bytes)
{
    if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0 || !pwrite_full(fd, bytes.data(), bytes.size(), 0))
        throw std::system_error(errno, std::generic_category(), "writing a mapped file's copy");
}

} // namespace

MappedFileCopies::~MappedFileCopies()
{
    copies_.clear();
    if (!dir_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(dir_, ec);
    }
}

std::string MappedFileCopies::path_for(const FileRef& file, const std::filesystem::path& recorded)
{
    FileIdentity id{file.dev, file.ino};
    UniqueFd source(::open(recorded.c_str(), O_RDONLY | O_CLOEXEC));
    if (source.get() < 0)
        throw std::runtime_error("cannot open the trace's copy of " + file.path + ": " + std::strerror(errno));
    // Copied by its data: a sparse file of 100 GB is not read whole.
    auto copy_in = [&](int fd) {
        if (::ftruncate(fd, 0) != 0)
            throw std::system_error(errno, std::generic_category(), "emptying a mapped file's copy");
        FileStore::copy_open_file(source.get(), fd);
    };
    auto it = copies_.find(id);
    if (it != copies_.end()) {
        if (FileStore::hash_open_file(it->second.fd.get()) != file.content_hash)
            copy_in(it->second.fd.get());
        return it->second.path;
    }
    if (dir_.empty()) {
        char tmpl[] = "/tmp/rewind-mapped-XXXXXX";
        if (!::mkdtemp(tmpl))
            throw std::runtime_error(std::string("cannot make a directory for mapped files: ") + std::strerror(errno));
        dir_ = tmpl;
    }
    std::string path = (dir_ / (std::to_string(file.dev) + "-" + std::to_string(file.ino))).string();
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
    if (fd.get() < 0)
        throw std::runtime_error("cannot make the replay's copy of " + file.path + ": " + std::strerror(errno));
    copy_in(fd.get());
    auto& copy = copies_[id];
    copy.path = path;
    copy.fd = std::move(fd);
    return path;
}

void MappedFileCopies::apply(const SyscallEvent& e)
{
    if (!e.file)
        return;
    auto it = copies_.find(FileIdentity{e.file->dev, e.file->ino});
    if (it == copies_.end())
        return; // mapped by no replayed process
    int fd = it->second.fd.get();
    switch (e.nr) {
    case SYS_ftruncate:
        break; // the size below is the one it set
    case SYS_fallocate:
        // The same request on the copy: holes punched, ranges zeroed or
        // collapsed as in the file.
        if (::fallocate(fd, static_cast<int>(e.args[1]), static_cast<off_t>(e.args[2]),
                        static_cast<off_t>(e.args[3])) != 0)
            throw std::system_error(errno, std::generic_category(), "fallocate on a mapped file's copy");
        break;
    default: {
        // write, pwrite64 and the vector forms: the bytes, in order, from
        // where the call wrote.
        uint64_t at = e.file_offset;
        for (const auto& m : e.memory) {
            if (m.dir != Direction::In)
                continue;
            if (m.hashed_only || m.unreadable)
                throw std::runtime_error("the trace keeps only a hash of what " + std::to_string(m.length) +
                                         " bytes written to a mapped file were");
            if (!pwrite_full(fd, m.bytes.data(), m.bytes.size(), at))
                throw std::system_error(errno, std::generic_category(), "writing a mapped file's copy");
            at += m.bytes.size();
        }
    }
    }
    if (::ftruncate(fd, e.file->size) != 0)
        throw std::system_error(errno, std::generic_category(), "resizing a mapped file's copy");
}

MappedFileCopies::Contents MappedFileCopies::save() const
{
    Contents saved;
    for (const auto& [id, copy] : copies_)
        saved[id] = read_whole(copy.fd.get());
    return saved;
}

void MappedFileCopies::restore(const Contents& contents)
{
    // Copies made since the snapshot stay as they are: nothing the
    // restored processes map refers to them.
    for (const auto& [id, bytes] : contents)
        if (auto it = copies_.find(id); it != copies_.end())
            overwrite(it->second.fd.get(), bytes);
}

} // namespace rw::replay
