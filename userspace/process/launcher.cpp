#include "launcher.h"

#include "recording_filter.h"

#include <fcntl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace rw {
namespace {

void report_and_exit(int fd, const std::string& message)
{
    ssize_t ignored = ::write(fd, message.data(), message.size());
    (void)ignored;
    _exit(127);
}

} // namespace

std::string disable_aslr_and_trap_tsc()
{
    int persona = personality(0xffffffff);
    if (persona == -1 || personality(static_cast<unsigned long>(persona) | ADDR_NO_RANDOMIZE) == -1)
        return std::string("personality(ADDR_NO_RANDOMIZE): ") + strerror(errno);
    if (prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) != 0)
        return std::string("prctl(PR_SET_TSC): ") + strerror(errno);
    return "";
}

std::string prepare_for_recording()
{
    std::string err = disable_aslr_and_trap_tsc();
    if (err.empty() && !install_recording_filter())
        err = std::string("installing the seccomp filter of recorded processes: ") + strerror(errno);
    return err;
}

std::string find_program(const std::string& name)
{
    auto executable = [](const std::string& p) {
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
    };
    if (name.find('/') != std::string::npos)
        return executable(name) ? name : "";
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    size_t start = 0;
    while (start <= dirs.size()) {
        size_t end = dirs.find(':', start);
        if (end == std::string::npos)
            end = dirs.size();
        std::string dir = dirs.substr(start, end - start);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (executable(candidate))
            return candidate;
        start = end + 1;
    }
    return "";
}

Launcher::Launcher(std::string path, std::vector<std::string> argv, std::vector<std::string> envp, SignalState signals,
                   Prepare prepare)
{
    // The go channel is a socket so that release() can write to a child
    // that already exited (its preparation failed) without SIGPIPE.
    int go[2], err[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go) != 0 || pipe2(err, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    auto c_argv = c_strings(argv);
    auto c_envp = c_strings(envp);

    pid_ = fork();
    if (pid_ < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (pid_ == 0) {
        ::close(go[1]);
        ::close(err[0]);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (std::string problem = prepare(); !problem.empty())
            report_and_exit(err[1], problem);
        char byte;
        while (::read(go[0], &byte, 1) < 0 && errno == EINTR) {
        }
        if (int e = signals.apply(); e != 0)
            report_and_exit(err[1], std::string("setting the signal state: ") + strerror(e));
        execve(path.c_str(), c_argv.data(), c_envp.data());
        report_and_exit(err[1], strerror(errno));
    }
    ::close(go[0]);
    ::close(err[1]);
    go_fd_ = go[1];
    error_fd_ = err[0];
}

Launcher::~Launcher()
{
    if (go_fd_ >= 0)
        ::close(go_fd_);
    if (error_fd_ >= 0)
        ::close(error_fd_);
}

std::string Launcher::release()
{
    char byte = 1;
    // EPIPE: the child gave up before it read this; its reason follows.
    if (::send(go_fd_, &byte, 1, MSG_NOSIGNAL) != 1 && errno != EPIPE)
        return std::string("cannot start the program: ") + strerror(errno);
    ::close(go_fd_);
    go_fd_ = -1;
    // The error pipe closes on a successful execve; otherwise it says why not.
    std::string message;
    char buf[256];
    ssize_t n;
    while ((n = ::read(error_fd_, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        message.append(buf, static_cast<size_t>(n));
    }
    ::close(error_fd_);
    error_fd_ = -1;
    return message;
}

std::vector<char*> c_strings(std::vector<std::string>& v)
{
    std::vector<char*> out;
    for (auto& s : v)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

} // namespace rw
