#include "loopback_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace rw::cli {

namespace {

// As /proc/net/tcp prints an IPv4 endpoint: the address's 32 bits as the
// kernel holds them, then the port, in hex.
std::string proc_endpoint(const sockaddr_in& a)
{
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08X:%04X", a.sin_addr.s_addr, ntohs(a.sin_port));
    return buf;
}

} // namespace

std::optional<uid_t> loopback_peer_uid(int conn)
{
    sockaddr_in ours{}, theirs{};
    socklen_t len = sizeof ours;
    if (::getsockname(conn, reinterpret_cast<sockaddr*>(&ours), &len) != 0 || ours.sin_family != AF_INET)
        return std::nullopt;
    len = sizeof theirs;
    if (::getpeername(conn, reinterpret_cast<sockaddr*>(&theirs), &len) != 0 || theirs.sin_family != AF_INET)
        return std::nullopt;
    // The peer's own socket: its local end is their address, its remote end ours.
    std::string local = proc_endpoint(theirs), remote = proc_endpoint(ours);
    std::ifstream table("/proc/net/tcp");
    std::string line;
    std::getline(table, line); // the header
    while (std::getline(table, line)) {
        std::istringstream fields(line);
        std::string slot, l, r, state, queues, timer, retransmits;
        uid_t uid;
        if (fields >> slot >> l >> r >> state >> queues >> timer >> retransmits >> uid && l == local && r == remote)
            return uid;
    }
    return std::nullopt;
}

} // namespace rw::cli
