#include "read_copies.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "bpf_capture.h"
#include "file_store.h"
#include "mapped_files.h"
#include "unique_fd.h"

namespace rw {

namespace {

// Raised by a broken lease (F_SETSIG); the first real-time signals are
// glibc's own.
int lease_signal()
{
    return SIGRTMIN + 4;
}

// Files shared at once: each holds a descriptor in the recorder.
constexpr size_t kMaxLeases = 512;

bool same_file(const struct stat& st, const rw_file_identity& id)
{
    rw_file_identity now = kernel_identity(st);
    return S_ISREG(st.st_mode) && now.dev == id.dev && now.ino == id.ino && now.size == id.size &&
           now.mtime_ns == id.mtime_ns;
}

} // namespace

void ReadCopies::block_lease_signal()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, lease_signal());
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

ReadCopies::ReadCopies(FileStore& store, BpfCapture& capture) : store_(store), capture_(capture)
{
    block_lease_signal();
    // The thread takes no signal but the lease's: the supervisor waits for
    // SIGCHLD through a signalfd, and a process-directed signal goes to any
    // thread that does not block it.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    lease_thread_ = std::thread([this] { take_broken_leases(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ReadCopies::~ReadCopies()
{
    stopping_ = true;
    pthread_kill(lease_thread_.native_handle(), lease_signal());
    lease_thread_.join();
    release_all();
}

void ReadCopies::take_broken_leases()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, lease_signal());
    while (!stopping_) {
        siginfo_t info{};
        if (sigwaitinfo(&set, &info) < 0 || info.si_code == SI_TKILL)
            continue;
        std::lock_guard lock(mutex_);
        auto it = leased_.find(info.si_fd);
        if (it == leased_.end())
            continue;
        // Withdrawn before the writer's open can return.
        const rw_file_identity& id = it->second;
        capture_.withdraw_read_copy(id);
        lease_of_.erase({id.dev, id.ino, id.size, id.mtime_ns});
        ::fcntl(it->first, F_SETLEASE, F_UNLCK);
        ::close(it->first);
        leased_.erase(it);
        counts_.leases_broken++;
    }
}

void ReadCopies::release_all()
{
    std::lock_guard lock(mutex_);
    for (auto& [fd, id] : leased_) {
        ::fcntl(fd, F_SETLEASE, F_UNLCK);
        ::close(fd);
    }
    leased_.clear();
    lease_of_.clear();
}

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
    Key key{id.dev, id.ino, id.size, id.mtime_ns};
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
    std::lock_guard lock(mutex_);
    Key key{id.dev, id.ino, id.size, id.mtime_ns};
    if (lease_of_.count(key))
        return Shared::Yes; // another thread's reads got there first
    if (leased_.size() >= kMaxLeases)
        return Shared::No;
    int file = open_again(tid, tgid, fd, id);
    if (file < 0)
        return Shared::NotNow;
    bool ok = ::fcntl(file, F_SETSIG, lease_signal()) == 0 && ::fcntl(file, F_SETLEASE, F_RDLCK) == 0;
    if (ok) {
        // Under the lease nobody writes it: hashed now, the copy is what
        // every later read with this identity gets.
        try {
            std::string hash = store_.store_fd_rehashed(file);
            struct stat st {};
            ok = ::fstat(file, &st) == 0 && same_file(st, id);
            if (ok)
                copies_[key] = hash;
        } catch (const std::exception&) {
            ok = false;
        }
    }
    if (ok)
        ok = capture_.share_read_copy(id);
    if (!ok) {
        ::fcntl(file, F_SETLEASE, F_UNLCK);
        ::close(file);
        return Shared::No;
    }
    leased_[file] = id;
    lease_of_[key] = file;
    counts_.files_shared++;
    return Shared::Yes;
}

std::string ReadCopies::copy_of(const rw_file_identity& id, uint64_t bytes)
{
    auto it = copies_.find({id.dev, id.ino, id.size, id.mtime_ns});
    if (it == copies_.end())
        return "";
    reads_by_reference_++;
    bytes_by_reference_ += bytes;
    return it->second;
}

ReadCopies::Counts ReadCopies::counts() const
{
    std::lock_guard lock(mutex_);
    Counts c = counts_;
    c.reads_by_reference = reads_by_reference_;
    c.bytes_by_reference = bytes_by_reference_;
    return c;
}

} // namespace rw
