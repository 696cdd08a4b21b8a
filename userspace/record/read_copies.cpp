#include "read_copies.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <optional>

#include "bpf_capture.h"
#include "file_store.h"
#include "mapped_files.h"
#include "unique_fd.h"

namespace rw {

namespace {

bool same_file(const struct stat& st, const rw_file_identity& id)
{
    rw_file_identity now = kernel_identity(st);
    return S_ISREG(st.st_mode) && now.dev == id.dev && now.ino == id.ino && now.size == id.size &&
           now.mtime_ns == id.mtime_ns && now.ctime_ns == id.ctime_ns;
}

// A change of the file after the copy must move its ctime. Filesystems
// with multigrain timestamps guarantee that once the time was read (the
// copy's fstat reads it); on others a change within the same clock tick
// (10 ms at most) could keep it, so a file changed less than this long ago
// is not shared there yet.
constexpr int64_t kSettledNs = 50'000'000;

bool settled(const rw_file_identity& id)
{
    struct timespec now {};
    clock_gettime(CLOCK_REALTIME, &now);
    return static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - id.ctime_ns >= kSettledNs;
}

} // namespace

ReadCopies::ReadCopies(FileStore& store, BpfCapture& capture) : store_(store), capture_(capture) {}

void ReadCopies::on_open(Tid tgid, int fd, const std::string& path)
{
    if (path.empty())
        return;
    opened_[{tgid, fd}] = path[0] == '/' ? path : "/proc/" + std::to_string(tgid) + "/cwd/" + path;
}

void ReadCopies::on_read_by_content(Tid tid, Tid tgid, int fd, const rw_file_identity& id, uint64_t bytes)
{
    if (id.size <= 0)
        return;
    Key key = key_of(id);
    Candidate& c = candidates_[key];
    c.bytes += bytes;
    if (c.next_try == 0) {
        uint64_t size = static_cast<uint64_t>(id.size);
        bool held = store_.holds(kernel_dev_to_user(id.dev), id.ino, id.size, id.mtime_ns);
        c.next_try = held ? size : 2 * size;
    }
    if (c.bytes < c.next_try)
        return;
    switch (share(tid, tgid, fd, id)) {
    case Shared::Yes:
        candidates_.erase(key);
        break;
    case Shared::NotNow:
        break; // the descriptor was closed by now: at the next read
    case Shared::No:
        c.next_try = 2 * c.bytes; // tried at ever longer intervals
        break;
    }
}

int ReadCopies::open_again(Tid tid, Tid tgid, int fd, const rw_file_identity& id) const
{
    // The recorder drains the ring in batches: the descriptor may be closed
    // or lead elsewhere by now; the identity says whether it is the file.
    std::vector<std::string> paths{"/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd)};
    if (auto it = opened_.find({tgid, fd}); it != opened_.end())
        paths.push_back(it->second);
    for (const auto& path : paths) {
        // Looked at before it is opened: opening a device can act on it.
        UniqueFd where(::open(path.c_str(), O_PATH | O_CLOEXEC));
        struct stat st {};
        if (!where || ::fstat(where.get(), &st) != 0 || !same_file(st, id))
            continue;
        std::string self = "/proc/self/fd/" + std::to_string(where.get());
        int file = ::open(self.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (file >= 0 && ::fstat(file, &st) == 0 && same_file(st, id))
            return file;
        if (file >= 0)
            ::close(file);
    }
    return -1;
}

ReadCopies::Shared ReadCopies::share(Tid tid, Tid tgid, int fd, const rw_file_identity& id)
{
    Key key = key_of(id);
    if (copies_.count(key)) {
        // Shared before: still, unless someone opened it for writing since.
        std::optional<rw_read_copy> entry = capture_.read_copy(id);
        if (entry && entry->state == RW_COPY_SHARED && key_of(entry->id) == key)
            return Shared::Yes;
    }
    bool later = false;
    std::string hash = copy_registered(tid, tgid, fd, id, later);
    if (hash.empty()) {
        capture_.withdraw_read_copy(id);
        return later ? Shared::NotNow : Shared::No;
    }
    copies_[key] = hash;
    files_shared_++;
    return Shared::Yes;
}

std::string ReadCopies::copy_registered(Tid tid, Tid tgid, int fd, const rw_file_identity& id, bool& later)
{
    if (!capture_.register_read_copy(id))
        return ""; // the kernel side has no room
    // Registered first, so that every open for writing from here on is
    // seen; this open of the recorder's own counts the writers before it.
    UniqueFd file(open_again(tid, tgid, fd, id));
    if (!file) {
        later = true; // the descriptor was closed by now: at the next read
        return "";
    }
    std::optional<rw_read_copy> entry = capture_.read_copy(id);
    if (!entry || entry->state != RW_COPY_CHECKED || entry->writers > 0)
        return ""; // somebody has it open for writing, or opened it so since
    if (!entry->fine_ctime && !settled(id)) {
        later = true;
        return "";
    }
    std::string hash;
    try {
        hash = store_.store_fd_rehashed(file.get());
    } catch (const std::exception&) {
        return "";
    }
    struct stat st {};
    if (::fstat(file.get(), &st) != 0 || !same_file(st, id))
        return ""; // written meanwhile (through a descriptor opened before)
    if (!capture_.share_read_copy(id))
        return ""; // opened for writing meanwhile
    return hash;
}

std::string ReadCopies::copy_of(const rw_file_identity& id, uint64_t bytes)
{
    auto it = copies_.find(key_of(id));
    if (it == copies_.end())
        return "";
    reads_by_reference_++;
    bytes_by_reference_ += bytes;
    return it->second;
}

ReadCopies::Counts ReadCopies::counts() const
{
    Counts c;
    c.files_shared = files_shared_;
    c.copies_retired = capture_.read_copies_retired();
    c.reads_by_reference = reads_by_reference_;
    c.bytes_by_reference = bytes_by_reference_;
    return c;
}

} // namespace rw
