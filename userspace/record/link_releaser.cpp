#include "link_releaser.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace rw {
namespace {

// Descriptors per message: SCM_RIGHTS takes up to 253.
constexpr size_t kLinksPerMessage = 64;

bool single_threaded()
{
    std::error_code ec;
    auto tasks = std::filesystem::directory_iterator("/proc/self/task", ec);
    if (ec)
        return false;
    return std::distance(tasks, std::filesystem::directory_iterator{}) == 1;
}

void close_all_but(int keep)
{
    // close_range(2) is Linux 5.9; the recorder needs 6.6 for its links anyway.
    if (keep > 3)
        ::syscall(SYS_close_range, 3u, static_cast<unsigned>(keep - 1), 0u);
    ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
}

[[noreturn]] void run_holder(int socket)
{
    ::setsid();
    close_all_but(socket);
    int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; fd++)
        if (null >= 0 && null != fd)
            ::dup2(null, fd);
    if (null > 2)
        ::close(null);
    {
        LinkCloser closer;
        for (;;) {
            char byte;
            iovec iov{&byte, 1};
            alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kLinksPerMessage)];
            msghdr msg{};
            msg.msg_iov = &iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control;
            msg.msg_controllen = sizeof(control);
            ssize_t n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break; // the recorder is done (or gone)
            std::vector<UniqueFd> links;
            for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                    continue;
                size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                for (size_t i = 0; i < count; i++) {
                    int fd;
                    std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                    links.emplace_back(fd);
                }
            }
            closer.close(std::move(links));
        }
    } // waits for the last closes
    ::_exit(0);
}

} // namespace

LinkReleaser::LinkReleaser(bool holder)
{
    if (!holder || !single_threaded())
        return;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        return;
    UniqueFd ours(pair[0]), theirs(pair[1]);
    // Twice forked: the holder is no child of the recorder, whose waitpid(-1)
    // must see only the recorded processes, and outlives it.
    int report[2];
    if (::pipe2(report, O_CLOEXEC) != 0)
        return;
    UniqueFd report_read(report[0]), report_write(report[1]);
    pid_t middle = ::fork();
    if (middle < 0)
        return;
    if (middle == 0) {
        pid_t pid = ::fork();
        if (pid == 0)
            run_holder(theirs.get());
        ssize_t w = ::write(report_write.get(), &pid, sizeof(pid));
        ::_exit(w == sizeof(pid) && pid > 0 ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
    }
    pid_t pid = -1;
    report_write.reset();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || ::read(report_read.get(), &pid, sizeof(pid)) != sizeof(pid))
        return;
    holder_ = std::move(ours);
    holder_pid_ = pid;
}

LinkReleaser::~LinkReleaser()
{
    holder_.reset(); // the holder ends once its closes are done
}

void LinkReleaser::release(std::vector<UniqueFd> links)
{
    if (links.empty())
        return;
    if (holder_ && hand_over(links))
        return;
    local_.close(std::move(links));
}

void LinkReleaser::finish()
{
    local_.finish();
}

bool LinkReleaser::hand_over(std::vector<UniqueFd>& links)
{
    for (size_t start = 0; start < links.size(); start += kLinksPerMessage) {
        size_t count = std::min(kLinksPerMessage, links.size() - start);
        char byte = 0;
        iovec iov{&byte, 1};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kLinksPerMessage)] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * count);
        cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * count);
        for (size_t i = 0; i < count; i++) {
            int fd = links[start + i].get();
            std::memcpy(CMSG_DATA(c) + i * sizeof(int), &fd, sizeof(int));
        }
        ssize_t sent;
        do
            sent = ::sendmsg(holder_.get(), &msg, MSG_NOSIGNAL);
        while (sent < 0 && errno == EINTR);
        if (sent != 1) {
            // The holder is gone: what it did not get is closed here.
            holder_.reset();
            holder_pid_ = -1;
            links.erase(links.begin(), links.begin() + static_cast<long>(start));
            return false;
        }
        // Not the last reference any more (the message holds one): quick.
        for (size_t i = 0; i < count; i++)
            links[start + i].reset();
    }
    return true;
}

} // namespace rw
