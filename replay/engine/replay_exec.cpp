// An exec of a replayed process, at its entry: the call checked against the
// recorded exec, and what the kernel resolves for real made to lead to the
// image it loaded in the recording. The kernel names the new image after
// the call's own arguments (AT_EXECFN, the top of the initial stack), so
// they are left as the program passed them; what they lead to is prepared
// instead. The trace's copies are bind-mounted over the recorded paths
// (replay_mounts.cpp); a relative path is resolved from the directory it
// reached the image from, which an emulated chdir left unchanged.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "exec_names.h"
#include "remote_syscall.h"
#include "replayer.h"
#include "unique_fd.h"

namespace rw::replay {
namespace {

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
    if (!name->starts_with("/"))
        reach_relative_exec(t, e, *name);
}

void Replayer::reach_relative_exec(Task& t, const ExecEvent& e, const std::string& name)
{
    // The replayed process's working directory is where the replay started
    // it, whatever chdir it made (emulated). Where the name reaches the
    // trace's copy from there, or a #! script (which the trace has no copy
    // of), the exec goes as it is.
    const Mapping* image = exec_image(e);
    if (!image || !image->path.starts_with("/"))
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
