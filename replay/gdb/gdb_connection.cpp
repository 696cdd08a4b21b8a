#include "gdb_connection.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace rw::replay {

bool GdbConnection::fill(int timeout_ms)
{
    if (closed_)
        return false;
    struct pollfd p = {in_, POLLIN, 0};
    int n = ::poll(&p, 1, timeout_ms);
    if (n <= 0)
        return false;
    char buf[65536];
    ssize_t got = ::read(in_, buf, sizeof(buf));
    if (got <= 0) {
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            return false;
        closed_ = true;
        return false;
    }
    buffer_.append(buf, static_cast<size_t>(got));
    return true;
}

bool GdbConnection::interrupted()
{
    while (fill(0)) {
    }
    // Interrupt bytes arrive between packets.
    for (size_t i = 0; i < buffer_.size();) {
        if (buffer_[i] == '\x03') {
            interrupt_ = true;
            buffer_.erase(i, 1);
        } else if (buffer_[i] == '$') {
            break;
        } else {
            i++;
        }
    }
    bool r = interrupt_;
    interrupt_ = false;
    // A debugger that went away interrupts too: the session then finds the
    // connection closed and ends, rather than replaying on for nobody.
    return r || (closed_ && buffer_.find('$') == std::string::npos);
}

std::optional<std::string> GdbConnection::read_packet()
{
    for (;;) {
        // Drop acknowledgments and interrupts before a packet.
        size_t start = buffer_.find('$');
        for (size_t i = 0; i < std::min(start, buffer_.size()); i++)
            if (buffer_[i] == '\x03')
                interrupt_ = true;
        if (start != std::string::npos) {
            size_t hash = buffer_.find('#', start);
            if (hash != std::string::npos && hash + 2 < buffer_.size()) {
                std::string raw = buffer_.substr(start + 1, hash - start - 1);
                unsigned expected = 0;
                std::sscanf(buffer_.c_str() + hash + 1, "%2x", &expected);
                buffer_.erase(0, hash + 3);
                unsigned sum = 0;
                for (unsigned char c : raw)
                    sum += c;
                if (!no_ack_) {
                    const char* ack = (sum & 0xff) == expected ? "+" : "-";
                    ssize_t ignored = ::write(out_, ack, 1);
                    (void)ignored;
                    if ((sum & 0xff) != expected)
                        continue;
                }
                std::string payload;
                payload.reserve(raw.size());
                for (size_t i = 0; i < raw.size(); i++) {
                    if (raw[i] == '}' && i + 1 < raw.size())
                        payload.push_back(static_cast<char>(raw[++i] ^ 0x20));
                    else
                        payload.push_back(raw[i]);
                }
                return payload;
            }
        } else {
            buffer_.clear();
        }
        if (!fill(-1) && closed_)
            return std::nullopt;
    }
}

std::string GdbConnection::escape(std::string_view data)
{
    std::string out;
    out.reserve(data.size());
    for (char c : data) {
        if (c == '$' || c == '#' || c == '}' || c == '*') {
            out.push_back('}');
            out.push_back(static_cast<char>(c ^ 0x20));
        } else {
            out.push_back(c);
        }
    }
    return out;
}

void GdbConnection::send(std::string_view payload)
{
    if (closed_)
        return; // nobody reads it any more
    unsigned sum = 0;
    for (unsigned char c : payload)
        sum += c;
    char tail[4];
    std::snprintf(tail, sizeof(tail), "#%02x", sum & 0xff);
    std::string packet = "$" + std::string(payload) + tail;
    for (int attempt = 0; attempt < 5; attempt++) {
        size_t done = 0;
        while (done < packet.size()) {
            ssize_t n = ::write(out_, packet.data() + done, packet.size() - done);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                // (EPIPE, not SIGPIPE: rewind serve ignores the signal.)
                closed_ = true;
                lost_mid_reply_ = true;
                return;
            }
            done += static_cast<size_t>(n);
        }
        if (no_ack_)
            return;
        // Wait for the acknowledgment.
        for (;;) {
            size_t i = buffer_.find_first_of("+-");
            size_t dollar = buffer_.find('$');
            if (i != std::string::npos && (dollar == std::string::npos || i < dollar)) {
                char c = buffer_[i];
                buffer_.erase(i, 1);
                if (c == '+')
                    return;
                break; // '-': send again
            }
            if (!fill(5000))
                return;
        }
    }
}

} // namespace rw::replay
