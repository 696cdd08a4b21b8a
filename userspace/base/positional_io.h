// pread/pwrite of a whole range, retried across short transfers and EINTR.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace rw {

// Bytes read: fewer than n at the end of the file; -1 on an error (errno
// says which) before anything was read.
inline ssize_t pread_full(int fd, void* buf, size_t n, uint64_t offset)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = ::pread(fd, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return done ? static_cast<ssize_t>(done) : -1;
        if (r == 0)
            break;
        done += static_cast<size_t>(r);
    }
    return static_cast<ssize_t>(done);
}

// False if not all of it could be written (errno says why, if it was an error).
inline bool pwrite_full(int fd, const void* buf, size_t n, uint64_t offset)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = ::pwrite(fd, static_cast<const char*>(buf) + done, n - done, static_cast<off_t>(offset + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        done += static_cast<size_t>(r);
    }
    return true;
}

} // namespace rw
