#include "memory_writes.h"

#include <fmt/core.h>

#include <stdexcept>

#include "text.h"

namespace rw::cli {
namespace {

// (null where the server could not read them)
std::vector<uint8_t> bytes_of(const nlohmann::json& hex)
{
    return hex.is_string() ? bytes_from_hex(hex.get<std::string>()) : std::vector<uint8_t>{};
}

} // namespace

std::vector<std::pair<uint64_t, uint32_t>> watch_pieces(uint64_t address, uint64_t size)
{
    std::vector<std::pair<uint64_t, uint32_t>> pieces;
    for (uint64_t a = address; a < address + size;) {
        uint32_t len = 8;
        while (len > 1 && (a % len != 0 || a + len > address + size))
            len /= 2;
        pieces.emplace_back(a, len);
        a += len;
    }
    if (size == 0 || pieces.size() > 4)
        throw QueryInputError(fmt::format("{} bytes at {:#x} need {} debug registers, and the CPU has 4: watch "
                                          "a part of them (a field, an element)",
                                          size, address, pieces.size()));
    return pieces;
}

WriteList list_writes(GdbMi& gdb, const WatchedBytes& watched, uint64_t most)
{
    WriteList list;
    list.watched = watched;
    list.most = most;
    std::string command = "rw-query begin end";
    for (auto [addr, len] : watch_pieces(watched.address, watched.type.size))
        command += fmt::format(" w{:x}.{}", addr, len);
    nlohmann::json reply = tool_reply(gdb, command + fmt::format(" most={}", most));
    list.complete = reply.value("complete", true);

    CodePlaces places(gdb);
    std::string before = watched.type.format(bytes_of(reply["initial"]));
    list.initial = before;
    for (const auto& h : reply["hits"]) {
        WriteRecord w;
        w.position = h["position"].get<std::string>();
        w.old_value = before;
        w.new_value = watched.type.format(bytes_of(h["bytes"]));
        if (h["kind"] == "event") {
            w.by = "event";
            w.event = h["event"].get<uint64_t>();
        } else {
            w.by = "instruction";
            w.thread = h["thread"].get<int64_t>();
            for (const auto& b : h.value("before", nlohmann::json::array()))
                w.writers.push_back(b.get<uint64_t>());
            // The writer is one of the instructions that may come before
            // the trap; where their lines agree, that line wrote.
            if (!w.writers.empty()) {
                w.place = places.at(w.writers.front());
                for (uint64_t other : w.writers) {
                    const CodePlace& p = places.at(other);
                    if (p.function != w.place.function || p.line != w.place.line)
                        w.place = places.at(h["regs"]["rip"].get<uint64_t>());
                }
            } else {
                w.place = places.at(h["regs"]["rip"].get<uint64_t>());
            }
        }
        before = w.new_value;
        list.writes.push_back(std::move(w));
    }
    return list;
}

} // namespace rw::cli
