// Compact binary building blocks of the trace format: LEB128 varints,
// zigzag-encoded signed values, length-prefixed bytes. The reader checks
// every bound and throws FormatError instead of reading past its input.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rw {

struct FormatError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class ByteWriter {
public:
    explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}

    void u8(uint8_t v) { out_.push_back(v); }
    void varint(uint64_t v)
    {
        uint8_t b[10];
        size_t n = 0;
        while (v >= 0x80) {
            b[n++] = static_cast<uint8_t>(v) | 0x80;
            v >>= 7;
        }
        b[n++] = static_cast<uint8_t>(v);
        out_.insert(out_.end(), b, b + n);
    }
    void svarint(int64_t v) { varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63)); }
    void fixed64(uint64_t v)
    {
        uint8_t b[8];
        std::memcpy(b, &v, 8);
        out_.insert(out_.end(), b, b + 8);
    }
    void raw(std::span<const uint8_t> bytes) { out_.insert(out_.end(), bytes.begin(), bytes.end()); }
    void bytes(std::span<const uint8_t> b)
    {
        varint(b.size());
        raw(b);
    }
    void str(std::string_view s) { bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()}); }

private:
    std::vector<uint8_t>& out_;
};

class ByteReader {
public:
    explicit ByteReader(std::span<const uint8_t> in) : in_(in) {}

    bool done() const { return pos_ == in_.size(); }
    size_t position() const { return pos_; }

    uint8_t u8()
    {
        need(1);
        return in_[pos_++];
    }
    uint64_t varint()
    {
        uint64_t v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            uint8_t b = u8();
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
        throw FormatError("varint longer than 64 bits");
    }
    int64_t svarint()
    {
        uint64_t v = varint();
        return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }
    uint64_t fixed64()
    {
        need(8);
        uint64_t v;
        std::memcpy(&v, in_.data() + pos_, 8);
        pos_ += 8;
        return v;
    }
    std::span<const uint8_t> raw(size_t n)
    {
        need(n);
        auto s = in_.subspan(pos_, n);
        pos_ += n;
        return s;
    }
    std::vector<uint8_t> bytes()
    {
        auto s = raw(length());
        return {s.begin(), s.end()};
    }
    std::string str()
    {
        auto s = raw(length());
        return {reinterpret_cast<const char*>(s.data()), s.size()};
    }
    // A length prefix, checked against what is left.
    size_t length()
    {
        uint64_t n = varint();
        if (n > in_.size() - pos_)
            throw FormatError("length " + std::to_string(n) + " exceeds the remaining " +
                              std::to_string(in_.size() - pos_) + " bytes");
        return static_cast<size_t>(n);
    }

private:
    void need(size_t n) const
    {
        if (n > in_.size() - pos_)
            throw FormatError("unexpected end of data");
    }
    std::span<const uint8_t> in_;
    size_t pos_ = 0;
};

} // namespace rw
