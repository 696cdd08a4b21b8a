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

// Creates `target` (and missing parents) under an overlay on its deepest
// existing ancestor, so a bind mount has somewhere to go.
std::string materialize(const fs::path& target, std::vector<std::string>& scratch_dirs)
{
    fs::path dir = target.parent_path();
    std::error_code ec;
    while (!dir.empty() && dir != dir.root_path() && !fs::is_directory(dir, ec))
        dir = dir.parent_path();
    if (dir.empty() || dir == dir.root_path())
        return "cannot recreate " + target.string() + ": no existing parent directory to overlay";
    char tmpl[] = "/tmp/rewind-overlay-XXXXXX";
    if (!mkdtemp(tmpl))
        return std::string("mkdtemp: ") + strerror(errno);
    std::string scratch = tmpl;
    scratch_dirs.push_back(scratch);
    if (mount("tmpfs", scratch.c_str(), "tmpfs", 0, "mode=0700") != 0)
        return std::string("tmpfs for an overlay: ") + strerror(errno);
    fs::create_directories(scratch + "/upper", ec);
    fs::create_directories(scratch + "/work", ec);
    std::string opts = "lowerdir=" + dir.string() + ",upperdir=" + scratch + "/upper,workdir=" + scratch + "/work";
    if (mount("overlay", dir.c_str(), "overlay", 0, opts.c_str()) != 0)
        return "overlay on " + dir.string() + ": " + strerror(errno);
    fs::create_directories(target.parent_path(), ec);
    int fd = ::open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0700);
    if (fd < 0)
        return "creating " + target.string() + ": " + strerror(errno);
    ::close(fd);
    return "";
}

} // namespace

// The trace keeps its copies owner-read-only (0600); the kernel executes
// only files with execute permission. Executables are therefore staged,
// with mode 0700, in a tmpfs that exists only in this mount namespace.
std::string stage_executable(const std::string& source, std::string& staged, std::vector<std::string>& scratch_dirs)
{
    static std::string staging;
    if (staging.empty()) {
        char tmpl[] = "/tmp/rewind-exec-XXXXXX";
        if (!mkdtemp(tmpl))
            return std::string("mkdtemp: ") + strerror(errno);
        scratch_dirs.push_back(tmpl);
        if (mount("tmpfs", tmpl, "tmpfs", 0, "mode=0700") != 0)
            return std::string("tmpfs for staged executables: ") + strerror(errno);
        staging = tmpl;
    }
    staged = staging + "/" + fs::path(source).filename().string();
    std::error_code ec;
    if (!fs::exists(staged, ec)) {
        fs::copy_file(source, staged, ec);
        if (ec)
            return "staging " + source + ": " + ec.message();
        ::chmod(staged.c_str(), 0700);
    }
    return "";
}

std::string apply_bind_mounts(const std::vector<BindMount>& binds, std::vector<std::string>& scratch_dirs)
{
    for (const auto& b : binds) {
        std::error_code ec;
        if (!fs::exists(b.target, ec)) {
            if (std::string err = materialize(b.target, scratch_dirs); !err.empty())
                return err;
        }
        std::string staged;
        if (std::string err = stage_executable(b.source, staged, scratch_dirs); !err.empty())
            return err;
        if (mount(staged.c_str(), b.target.c_str(), nullptr, MS_BIND, nullptr) != 0)
            return "bind-mounting the trace's copy over " + b.target + ": " + strerror(errno);
    }
    return "";
}

std::string apply_bind_mounts_in(pid_t pid, const std::vector<BindMount>& binds, std::vector<std::string>& scratch_dirs)
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
        std::vector<std::string> dirs;
        if (setns(ns.get(), CLONE_NEWNS) != 0)
            err = std::string("setns: ") + strerror(errno);
        else
            err = apply_bind_mounts(binds, dirs);
        for (const auto& d : dirs)
            err = "dir:" + d + "\n" + err;
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
    while (out.rfind("dir:", 0) == 0) {
        size_t nl = out.find('\n');
        scratch_dirs.push_back(out.substr(4, nl - 4));
        out.erase(0, nl + 1);
    }
    return out;
}

} // namespace rw::replay
