#include "gdb_reverse_watch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <vector>

#include "debug_session.h"
#include "gdb_server.h"

namespace rw::replay {

ReverseWatch::ReverseWatch(DebugSession& session, const std::string& expr, const std::string& at)
{
    UniqueFd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (!listener || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listener.get(), 1) != 0 ||
        ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        throw std::system_error(errno, std::generic_category(), "cannot listen on the loopback interface");
    int port = ntohs(addr.sin_port);

    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw std::system_error(errno, std::generic_category(), "pipe");
    std::string self = std::filesystem::read_symlink("/proc/self/exe");
    std::vector<std::string> argv = {self,
                                     "watch",
                                     std::filesystem::absolute(session.trace().dir()).string(),
                                     expr,
                                     "--at",
                                     at,
                                     "--connect",
                                     "localhost:" + std::to_string(port)};
    std::vector<char*> cargv;
    for (auto& a : argv)
        cargv.push_back(a.data());
    cargv.push_back(nullptr);
    child_ = ::fork();
    if (child_ < 0)
        throw std::system_error(errno, std::generic_category(), "fork");
    if (child_ == 0) {
        ::dup2(out[1], STDOUT_FILENO);
        int null = ::open("/dev/null", O_RDONLY);
        ::dup2(null, STDIN_FILENO);
        ::execv(self.c_str(), cargv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    output_.reset(out[0]);

    // Its gdb connects within a few seconds, or something is wrong.
    struct pollfd p = {listener.get(), POLLIN, 0};
    for (int waited = 0; ::poll(&p, 1, 200) == 0; waited += 200) {
        int status;
        if (::waitpid(child_, &status, WNOHANG) == child_) {
            child_ = -1;
            throw std::runtime_error("rewind watch ended before connecting: " + finish());
        }
        if (waited > 60000)
            throw std::runtime_error("rewind watch did not connect");
    }
    connection_fd_.reset(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!connection_fd_)
        throw std::system_error(errno, std::generic_category(), "accept");
    connection_ = std::make_unique<GdbConnection>(connection_fd_.get(), connection_fd_.get());
    files_ = std::make_unique<HostFiles>(session.trace());
    server_ = std::make_unique<GdbServer>(*connection_, session, *files_);
}

ReverseWatch::~ReverseWatch()
{
    if (child_ > 0) {
        ::kill(child_, SIGKILL);
        ::waitpid(child_, nullptr, 0);
    }
}

std::string ReverseWatch::finish()
{
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(output_.get(), buf, sizeof(buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text.append(buf, static_cast<size_t>(n));
    }
    if (child_ > 0) {
        ::waitpid(child_, nullptr, 0);
        child_ = -1;
    }
    return text;
}

} // namespace rw::replay
