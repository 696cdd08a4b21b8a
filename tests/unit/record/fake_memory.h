// A sparse fake address space for the buffer walker's tests: regions put
// at addresses, read back through the walker's UserReader.
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

#include "syscall_memory.h"

namespace rw::test {

struct FakeMemory {
    std::map<uint64_t, std::vector<uint8_t>> regions;
    void put(uint64_t addr, const void* data, size_t n)
    {
        auto* p = static_cast<const uint8_t*>(data);
        regions[addr] = std::vector<uint8_t>(p, p + n);
    }
    template <typename T> void put_value(uint64_t addr, T v) { put(addr, &v, sizeof v); }
    bool read(uint64_t addr, void* dst, size_t n) const
    {
        for (const auto& [start, bytes] : regions)
            if (addr >= start && addr + n <= start + bytes.size()) {
                std::memcpy(dst, bytes.data() + (addr - start), n);
                return true;
            }
        return false;
    }
    UserReader reader() const
    {
        return [this](uint64_t a, void* d, size_t n) { return read(a, d, n); };
    }
};

} // namespace rw::test
