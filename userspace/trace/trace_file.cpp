#include "trace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rw {
namespace fs = std::filesystem;

namespace {

const char* kind_of(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFLNK:
        return "a symbolic link";
    case S_IFIFO:
        return "a FIFO";
    case S_IFDIR:
        return "a directory";
    case S_IFCHR:
        return "a character device";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    default:
        return "not a regular file";
    }
}

[[noreturn]] void refuse(const fs::path& shown, const std::string& what)
{
    throw TraceFileError(shown.string() + " " + what +
                         ": rewind reads only regular files inside a trace, never through a link (a damaged or "
                         "crafted trace)");
}

[[noreturn]] void cannot_open(const fs::path& shown, int err)
{
    throw TraceFileError("cannot open " + shown.string() + ": " + std::strerror(err));
}

} // namespace

UniqueFd open_trace_file(const fs::path& trace_dir, const fs::path& relative, bool may_be_missing)
{
    // The trace directory itself may be reached through a link (`latest`,
    // a path the user chose): everything below it may not.
    UniqueFd dir(::open(trace_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir)
        cannot_open(trace_dir, errno);
    std::vector<std::string> parts;
    for (const auto& part : relative.lexically_normal())
        parts.push_back(part.string());
    if (parts.empty() || relative.is_absolute() || parts.front() == "..")
        throw TraceFileError("'" + relative.string() + "' is not a path inside the trace");
    fs::path shown = trace_dir;
    for (size_t i = 0; i < parts.size(); i++) {
        shown /= parts[i];
        bool last = i + 1 == parts.size();
        struct stat st {};
        if (::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT && may_be_missing)
                return {};
            if (errno == ENOENT)
                throw TraceFileError(shown.string() + " does not exist");
            cannot_open(shown, errno);
        }
        if (!last) {
            if (!S_ISDIR(st.st_mode))
                refuse(shown, std::string("is ") + kind_of(st.st_mode) + ", not a directory");
            UniqueFd next(::openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!next)
                cannot_open(shown, errno);
            dir = std::move(next);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            refuse(shown, std::string("is not a regular file but ") + kind_of(st.st_mode));
        // Swapped since the look (a race with whoever owns the trace):
        // no link is followed, and a FIFO does not block the open.
        UniqueFd fd(::openat(dir.get(), parts[i].c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!fd) {
            if (errno == ELOOP)
                refuse(shown, "is not a regular file but a symbolic link");
            cannot_open(shown, errno);
        }
        if (::fstat(fd.get(), &st) != 0)
            cannot_open(shown, errno);
        if (!S_ISREG(st.st_mode))
            refuse(shown, std::string("is not a regular file but ") + kind_of(st.st_mode));
        ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
        return fd;
    }
    return {}; // not reached: parts is not empty
}

std::string read_whole_trace_file(int fd, const std::string& shown_name, size_t max_bytes)
{
    std::string content;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw TraceFileError("cannot read " + shown_name + ": " + std::strerror(errno));
        if (n == 0)
            return content;
        if (content.size() + static_cast<size_t>(n) > max_bytes)
            throw TraceFileError(shown_name + " is larger than " + std::to_string(max_bytes >> 20) +
                                 " MiB, more than rewind ever writes there (a damaged or crafted trace)");
        content.append(buf, static_cast<size_t>(n));
    }
}

} // namespace rw
