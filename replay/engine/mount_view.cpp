#include "mount_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <functional>

#include "unique_fd.h"

namespace rw::replay {
namespace fs = std::filesystem;

std::string enter_private_mount_namespace()
{
    if (unshare(CLONE_NEWNS) != 0)
        return std::string("unshare(CLONE_NEWNS): ") + strerror(errno);
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return std::string("making mounts private: ") + strerror(errno);
    return "";
}

namespace {

// A tmpfs on a fresh directory under /tmp, mounted in this (private) mount
// namespace only. What is built from it (a bind mount of a staged file, an
// overlay's upper layer) holds its own reference to the tmpfs, so the
// mount is detached and its directory removed as soon as that is built:
// nothing is left behind in /tmp, even if rewind is killed later.
// Its directory must not lie under an overlay (rmdir would only hide it
// there): it goes in the first of a few temporary directories that is not
// under one.
class ScratchTmpfs {
public:
    std::string open(const char* purpose, const std::vector<fs::path>& overlaid)
    {
        auto within = [](const fs::path& p, const fs::path& dir) {
            auto rel = p.lexically_relative(dir);
            return !rel.empty() && *rel.begin() != "..";
        };
        std::string parent;
        std::error_code ec;
        for (const char* candidate : {"/tmp", "/var/tmp", "/dev/shm", "/run"}) {
            bool hidden = false;
            for (const auto& dir : overlaid)
                hidden = hidden || within(candidate, dir);
            if (!hidden && fs::is_directory(candidate, ec)) {
                parent = candidate;
                break;
            }
        }
        if (parent.empty())
            return std::string("no temporary directory for ") + purpose + " outside the overlays";
        std::string tmpl = parent + "/rewind-scratch-XXXXXX";
        if (!mkdtemp(tmpl.data()))
            return std::string("mkdtemp: ") + strerror(errno);
        path_ = tmpl;
        if (mount("tmpfs", path_.c_str(), "tmpfs", 0, "mode=0700") != 0)
            return std::string("tmpfs for ") + purpose + ": " + strerror(errno);
        mounted_ = true;
        return "";
    }
    const std::string& path() const { return path_; }
    ~ScratchTmpfs()
    {
        if (mounted_)
            umount2(path_.c_str(), MNT_DETACH);
        if (!path_.empty())
            ::rmdir(path_.c_str());
    }

private:
    std::string path_;
    bool mounted_ = false;
};

// Creates `target` (and missing parents) under an overlay on its deepest
// existing ancestor, so a bind mount has somewhere to go.
std::string materialize(const fs::path& target, std::vector<fs::path>& overlaid)
{
    fs::path dir = target.parent_path();
    std::error_code ec;
    while (!dir.empty() && dir != dir.root_path() && !fs::is_directory(dir, ec))
        dir = dir.parent_path();
    if (dir.empty() || dir == dir.root_path())
        return "cannot recreate " + target.string() + ": no existing parent directory to overlay";
    ScratchTmpfs scratch;
    overlaid.push_back(dir);
    if (std::string err = scratch.open("an overlay", overlaid); !err.empty())
        return err;
    fs::create_directories(scratch.path() + "/upper", ec);
    fs::create_directories(scratch.path() + "/work", ec);
    std::string opts =
        "lowerdir=" + dir.string() + ",upperdir=" + scratch.path() + "/upper,workdir=" + scratch.path() + "/work";
    if (mount("overlay", dir.c_str(), "overlay", 0, opts.c_str()) != 0)
        return "overlay on " + dir.string() + ": " + strerror(errno);
    fs::create_directories(target.parent_path(), ec);
    int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0700);
    if (fd < 0)
        return "creating " + target.string() + ": " + strerror(errno);
    ::close(fd);
    return "";
}

// The trace keeps its copies owner-read-only (0600); the kernel executes
// only files with execute permission. Executables are therefore staged,
// with mode 0700, in a scratch tmpfs, and bind-mounted from there.
std::string bind_staged_copy(const BindMount& b, ScratchTmpfs& staging, int index)
{
    std::string staged = staging.path() + "/" + std::to_string(index) + "-" + fs::path(b.source).filename().string();
    std::error_code ec;
    fs::copy_file(b.source, staged, ec);
    if (ec)
        return "staging " + b.source + ": " + ec.message();
    ::chmod(staged.c_str(), 0700);
    if (mount(staged.c_str(), b.target.c_str(), nullptr, MS_BIND, nullptr) != 0)
        return "bind-mounting the trace's copy over " + b.target + ": " + strerror(errno);
    return "";
}

} // namespace

std::string apply_bind_mounts(const std::vector<BindMount>& binds)
{
    if (binds.empty())
        return "";
    std::vector<fs::path> overlaid;
    for (const auto& b : binds) {
        std::error_code ec;
        if (!fs::exists(b.target, ec))
            if (std::string err = materialize(b.target, overlaid); !err.empty())
                return err;
    }
    ScratchTmpfs staging;
    if (std::string err = staging.open("staged executables", overlaid); !err.empty())
        return err;
    int index = 0;
    for (const auto& b : binds)
        if (std::string err = bind_staged_copy(b, staging, index++); !err.empty())
            return err;
    return "";
}

namespace {

// Runs `work` in a short-lived child that joins the mount namespace of
// `pid`: a mount is made by a process inside the namespace, and rewind's
// own must stay where it is. `work` returns an error or nothing, and may
// hand one descriptor back (`handed`).
std::string in_mount_namespace_of(pid_t pid, const std::function<std::string(UniqueFd&)>& work,
                                  UniqueFd* handed = nullptr)
{
    UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns)
        return std::string("opening the replay's mount namespace: ") + strerror(errno);
    int report[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, report) != 0)
        return std::string("socketpair: ") + strerror(errno);
    pid_t helper = fork();
    if (helper == 0) {
        ::close(report[0]);
        UniqueFd fd;
        std::string err;
        if (setns(ns.get(), CLONE_NEWNS) != 0)
            err = std::string("setns: ") + strerror(errno);
        else
            err = work(fd);
        // One message: a byte, then the error; the descriptor rides along.
        std::string text = "-" + err.substr(0, 4000);
        struct iovec iov = {text.data(), text.size()};
        alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        struct msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        if (fd) {
            msg.msg_control = control;
            msg.msg_controllen = sizeof control;
            struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
            c->cmsg_level = SOL_SOCKET;
            c->cmsg_type = SCM_RIGHTS;
            c->cmsg_len = CMSG_LEN(sizeof(int));
            int raw = fd.get();
            std::memcpy(CMSG_DATA(c), &raw, sizeof raw);
        }
        ssize_t ignored = ::sendmsg(report[1], &msg, 0);
        (void)ignored;
        _exit(0);
    }
    ::close(report[1]);
    UniqueFd reader(report[0]);
    if (helper < 0)
        return std::string("fork: ") + strerror(errno);
    char buf[4096];
    struct iovec iov = {buf, sizeof buf};
    alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    while ((n = ::recvmsg(reader.get(), &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    int status;
    while (waitpid(helper, &status, 0) < 0 && errno == EINTR) {
    }
    if (n <= 0)
        return "the helper in the replay's mount namespace ended without a word";
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            int raw;
            std::memcpy(&raw, CMSG_DATA(c), sizeof raw);
            UniqueFd got(raw);
            if (handed)
                *handed = std::move(got);
        }
    return std::string(buf + 1, static_cast<size_t>(n) - 1);
}

} // namespace

std::string apply_bind_mounts_in(pid_t pid, const std::vector<BindMount>& binds)
{
    return in_mount_namespace_of(pid, [&](UniqueFd&) { return apply_bind_mounts(binds); });
}

std::string detached_copy_in(pid_t pid, const std::string& source, UniqueFd& out)
{
    return in_mount_namespace_of(
        pid,
        [&](UniqueFd& fd) -> std::string {
            ScratchTmpfs staging;
            if (std::string err = staging.open("a detached copy", {}); !err.empty())
                return err;
            std::string staged = staging.path() + "/" + fs::path(source).filename().string();
            std::error_code ec;
            fs::copy_file(source, staged, ec);
            if (ec)
                return "staging " + source + ": " + ec.message();
            ::chmod(staged.c_str(), 0700);
            // The clone holds the tmpfs; the scratch mount goes as usual.
            fd.reset(::open_tree(AT_FDCWD, staged.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
            if (!fd)
                return std::string("open_tree of the staged copy: ") + strerror(errno);
            return "";
        },
        &out);
}

} // namespace rw::replay
