// The gdb remote serial protocol's framing: $payload#checksum, with
// acknowledgments until no-ack mode, '}'-escaping of binary data, and the
// 0x03 byte gdb sends to interrupt a running program.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rw::replay {

class GdbConnection {
public:
    GdbConnection(int in_fd, int out_fd) : in_(in_fd), out_(out_fd) {}

    // The next packet's payload, unescaped; nullopt once gdb has gone.
    std::optional<std::string> read_packet();
    void send(std::string_view payload);
    void set_no_ack() { no_ack_ = true; }
    // Non-blocking: whether gdb has asked to interrupt since the last call.
    bool interrupted();
    // Non-blocking: whether gdb has gone (its end of the connection closed),
    // keeping any bytes it sent before.
    bool gone()
    {
        while (fill(0)) {
        }
        return closed_;
    }

    // Whether gdb went away while a reply was being written to it (the
    // write failed: killed, connection reset). The session then ends as
    // when gdb closes the connection.
    bool lost_mid_reply() const { return lost_mid_reply_; }

    // Escaping for binary replies (vFile:pread, X).
    static std::string escape(std::string_view data);

private:
    bool fill(int timeout_ms);
    int in_, out_;
    std::string buffer_;
    bool no_ack_ = false;
    bool interrupt_ = false;
    bool closed_ = false;
    bool lost_mid_reply_ = false;
};

} // namespace rw::replay
