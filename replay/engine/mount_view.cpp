#include "mount_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

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

std::string apply_bind_mounts_in(pid_t pid, const std::vector<BindMount>& binds)
{
    UniqueFd ns(::open(("/proc/" + std::to_string(pid) + "/ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!ns)
        return std::string("opening the replay's mount namespace: ") + strerror(errno);
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0)
        return std::string("pipe: ") + strerror(errno);
    pid_t helper = fork();
    if (helper == 0) {
        ::close(report[0]);
        std::string err;
        if (setns(ns.get(), CLONE_NEWNS) != 0)
            err = std::string("setns: ") + strerror(errno);
        else
            err = apply_bind_mounts(binds);
        ssize_t ignored = ::write(report[1], err.data(), err.size());
        (void)ignored;
        _exit(0);
    }
    ::close(report[1]);
    std::string out;
    char buf[512];
    ssize_t n;
    while ((n = ::read(report[0], buf, sizeof(buf))) > 0)
        out.append(buf, static_cast<size_t>(n));
    ::close(report[0]);
    int status;
    waitpid(helper, &status, 0);
    return out;
}

} // namespace rw::replay
