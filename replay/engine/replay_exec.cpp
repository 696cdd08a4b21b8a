// An exec of a replayed process, at its entry: the call checked against the
// recorded exec, and what the kernel resolves for real made to lead to the
// image it loaded in the recording. The kernel names the new image after
// the call's own arguments (AT_EXECFN, the top of the initial stack), so
// they are left as the program passed them; what they lead to is prepared
// instead. The trace's copies are bind-mounted over the recorded paths
// (replay_mounts.cpp); a descriptor the exec goes through (fexecve,
// execveat relative to a directory, /proc/self/fd/N), which replay only
// emulates, is opened for real at its number, as a memfd or a detached
// mount where the recording's was one; a relative path is resolved from
// the directory it reached the image from, which an emulated chdir left
// unchanged.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "exec_names.h"
#include "mount_view.h"
#include "remote_syscall.h"
#include "replayer.h"
#include "unique_fd.h"

namespace rw::replay {
namespace {

#ifndef MFD_EXEC
constexpr unsigned kMfdExec = 0x10U; // Linux 6.3
#else
constexpr unsigned kMfdExec = MFD_EXEC;
#endif

// A memfd named as the recording's, holding the trace's copy.
std::string memfd_copy(const std::string& name, const std::string& source, UniqueFd& out)
{
    // Where the kernel knows MFD_EXEC, a memfd is executable only with it
    // (vm.memfd_noexec); an older one refuses the flag.
    out.reset(static_cast<int>(::syscall(SYS_memfd_create, name.c_str(), MFD_CLOEXEC | kMfdExec)));
    if (!out && errno == EINVAL)
        out.reset(static_cast<int>(::syscall(SYS_memfd_create, name.c_str(), MFD_CLOEXEC)));
    if (!out)
        return std::string("memfd_create: ") + strerror(errno);
    UniqueFd in(::open(source.c_str(), O_RDONLY | O_CLOEXEC));
    if (!in)
        return "opening " + source + ": " + strerror(errno);
    char buf[1 << 16];
    ssize_t n;
    while ((n = ::read(in.get(), buf, sizeof buf)) > 0)
        if (::write(out.get(), buf, static_cast<size_t>(n)) != n)
            return std::string("filling the memfd: ") + strerror(errno);
    return n < 0 ? "reading " + source + ": " + strerror(errno) : "";
}

bool same_file(const std::string& a, const std::string& b)
{
    struct stat sa, sb;
    return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

bool starts_with_shebang(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char head[2];
    return fd && ::read(fd.get(), head, 2) == 2 && head[0] == '#' && head[1] == '!';
}

} // namespace

const Mapping* Replayer::exec_image(const ExecEvent& e)
{
    for (const auto& m : e.mappings)
        if (!m.content_hash.empty() && m.path == e.executable)
            return &m;
    return nullptr;
}

void Replayer::enter_exec(Task& t, const ExecEvent& e)
{
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "execve(\"" + e.filename + "\")");
    s = past_group_stop(t, s, Resume::Syscall, "execve(\"" + e.filename + "\")");
    long nr = s.kind == StopInfo::Kind::SyscallStop ? static_cast<long>(t.regs()[Registers::ORIG_RAX]) : -1;
    if (nr != SYS_execve && nr != SYS_execveat)
        diverge(t, "expected execve(\"" + e.filename + "\"), got " + describe_stop(t, s));
    t.at = Task::At::SyscallEntry;
    const Registers& r = t.regs();
    bool at = nr == SYS_execveat;
    auto path = t.memory().read_string(RemoteAddr(r[at ? Registers::RSI : Registers::RDI]), 4096);
    std::optional<std::string> name;
    if (path)
        name = exec_name(nr, static_cast<int>(r[Registers::RDI]), *path, at ? r[Registers::R8] : 0);
    if (!name || *name != e.filename)
        diverge(t, "execve of a different program",
                "  expected \"" + e.filename + "\"\n  actual   \"" +
                    (name   ? *name
                     : path ? "an empty path without AT_EMPTY_PATH"
                            : "<unreadable>") +
                    "\"");
    if (auto route = descriptor_route(*name))
        open_exec_descriptor(t, e, *route);
    else if (!name->starts_with("/"))
        reach_relative_exec(t, e, *name);
}

void Replayer::open_exec_descriptor(Task& t, const ExecEvent& e, const DescriptorRoute& route)
{
    const Mapping* image = exec_image(e);
    std::string what = "execve(\"" + e.filename + "\") through descriptor " + std::to_string(route.fd);
    if (!image)
        refuse(e.tid, what + ": the trace has no copy of the program it loaded");
    // What the replayed process opens: a path in its mount namespace, or a
    // descriptor of the replayer's own, through /proc.
    std::string target;
    int flags = O_RDONLY | O_CLOEXEC;
    UniqueFd own;
    if (!route.rest.empty()) {
        auto dir = bind_mountable(image->path) ? directory_reaching(route.rest, live_path(image->path)) : std::nullopt;
        if (!dir)
            refuse(e.tid, what + ": the trace does not say which directory the descriptor was",
                   "  the program it loaded: " + image->path);
        target = *dir;
        flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    } else if (auto memfd = memfd_name(image->path)) {
        if (std::string err = memfd_copy(*memfd, checked_copy(e.tid, image->content_hash, image->path), own);
            !err.empty())
            refuse(e.tid, what + ": cannot recreate " + image->path + ": " + err);
    } else if (detached_mount_root(image->path)) {
        if (std::string err = detached_copy_in(t.tid(), checked_copy(e.tid, image->content_hash, image->path), own);
            !err.empty())
            refuse(e.tid, what + ": cannot recreate its detached mount: " + err);
    } else {
        target = live_path(image->path); // the trace's copy is bind-mounted there
    }
    if (own)
        target = "/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(own.get());
    OwnCalls calls(injecting_);
    RemoteSyscalls remote(t, waiter_, [this, &t](const StopInfo& stop) { return defer_own_interrupt(t, stop); });
    int64_t fd = remote.call(SYS_openat, static_cast<uint64_t>(AT_FDCWD), remote.push_string(target),
                             static_cast<uint64_t>(flags));
    if (fd < 0)
        refuse(e.tid, what + ": the replayed process cannot open " + target + ": " + strerror(static_cast<int>(-fd)));
    if (fd != route.fd) {
        // The number may be one the replay's own process uses (0-2, its
        // /dev/null): the recording had the program's file there.
        int64_t dup = remote.call(SYS_dup3, static_cast<uint64_t>(fd), static_cast<uint64_t>(route.fd), O_CLOEXEC);
        remote.call(SYS_close, static_cast<uint64_t>(fd));
        if (dup < 0)
            refuse(e.tid,
                   what + ": cannot give the replayed process that descriptor: " + strerror(static_cast<int>(-dup)));
    }
    remote.enter_original();
}

void Replayer::reach_relative_exec(Task& t, const ExecEvent& e, const std::string& name)
{
    // The replayed process's working directory is where the replay started
    // it, whatever chdir it made (emulated). Where the name reaches the
    // trace's copy from there, or a #! script (which the trace has no copy
    // of), the exec goes as it is.
    const Mapping* image = exec_image(e);
    if (!image || !bind_mountable(image->path))
        return;
    std::string proc = "/proc/" + std::to_string(t.tid());
    std::string reached = proc + "/cwd/" + name;
    if (same_file(reached, proc + "/root" + live_path(image->path)) || starts_with_shebang(reached))
        return;
    auto dir = directory_reaching(name, live_path(image->path));
    if (!dir)
        return; // what it loads is checked at the exec stop
    OwnCalls calls(injecting_);
    RemoteSyscalls remote(t, waiter_, [this, &t](const StopInfo& stop) { return defer_own_interrupt(t, stop); });
    int64_t ret = remote.call(SYS_chdir, remote.push_string(*dir));
    if (ret < 0)
        refuse(e.tid, "execve(\"" + e.filename + "\"): the replayed process cannot enter " + *dir +
                          ", where the recording found that program: " + strerror(static_cast<int>(-ret)));
    remote.enter_original();
}

} // namespace rw::replay
