#include "function_calls.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "text.h"

namespace rw::cli {
namespace {

uint64_t little_endian_word(const std::string& hex)
{
    std::vector<uint8_t> bytes = bytes_from_hex(hex);
    uint64_t v = 0;
    std::memcpy(&v, bytes.data(), std::min(bytes.size(), sizeof v));
    return v;
}

// The arguments as the x86-64 ABI passes them: integers and pointers in
// six registers, floats and doubles in xmm0-7. A parameter passed some
// other way (a struct by value, long double) makes the places of the ones
// after it uncertain: those are not guessed.
bool points_to_chars(const TypeInfo& t)
{
    return t.kind == "pointer" && (t.target == "char" || t.target == "unsigned char" || t.target == "signed char");
}

// A char pointer's string, as far as the bytes read at the call show it.
std::string quoted_string(const std::string& hex)
{
    std::string out = "\"";
    for (uint8_t c : bytes_from_hex(hex)) {
        if (c == 0)
            return out + "\"";
        if (c == '"' || c == '\\')
            out += std::string("\\") + static_cast<char>(c);
        else if (c == '\n')
            out += "\\n";
        else if (c >= 0x20 && c < 0x7f)
            out += static_cast<char>(c);
        else
            out += fmt::format("\\x{:02x}", c);
    }
    return out + "\"…";
}

std::vector<std::string> decode_args(const FunctionInfo& f, const nlohmann::json& hit)
{
    static const char* const kIntegerRegisters[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
    const auto& regs = hit["regs"];
    std::vector<std::string> out;
    if (!f.has_debug_info) {
        for (const char* r : kIntegerRegisters)
            out.push_back(fmt::format("{}={:#x}", r, regs[r].get<uint64_t>()));
        return out;
    }
    const nlohmann::json xmm = hit.value("xmm", nlohmann::json::array());
    size_t next_int = 0, next_float = 0;
    bool lost = false;
    for (const auto& p : f.params) {
        std::string v = "?";
        if (lost) {
        } else if (p.type.kind == "float" && (p.type.size == 4 || p.type.size == 8)) {
            if (next_float < xmm.size())
                v = p.type.format(xmm[next_float].get<uint64_t>());
            next_float++;
        } else if (p.type.kind == "other" || p.type.size > 8) {
            lost = true;
        } else if (next_int < 6) {
            const char* reg = kIntegerRegisters[next_int++];
            v = p.type.format(regs[reg].get<uint64_t>());
            if (points_to_chars(p.type) && hit.contains("pointed") && hit["pointed"].contains(reg))
                v += " " + quoted_string(hit["pointed"][reg].get<std::string>());
        }
        out.push_back(v);
    }
    return out;
}

// What the stops note besides the registers: xmm0-7 where a float is
// passed or returned, the bytes where a char pointer points.
std::string extras_wanted(const FunctionInfo& f)
{
    static const char* const kIntegerRegisters[] = {"rdi", "rsi", "rdx", "rcx", "r8", "r9"};
    std::vector<std::string> with;
    bool floats = f.returns && f.returns->kind == "float";
    size_t next_int = 0;
    for (const auto& p : f.params) {
        if (p.type.kind == "float") {
            floats = true;
        } else if (p.type.kind == "other" || p.type.size > 8) {
            break; // the places of the ones after it are not guessed
        } else if (next_int < 6) {
            if (points_to_chars(p.type))
                with.push_back(kIntegerRegisters[next_int]);
            next_int++;
        }
    }
    if (floats)
        with.push_back("xmm");
    std::string out;
    for (const auto& w : with)
        out += (out.empty() ? " with=" : ",") + w;
    return out;
}

std::string decode_return(const FunctionInfo& f, const nlohmann::json& hit)
{
    if (!f.has_debug_info)
        return fmt::format("{:#x}", hit["regs"]["rax"].get<uint64_t>());
    if (!f.returns)
        return "";
    const TypeInfo& t = *f.returns;
    if (t.kind == "float" && (t.size == 4 || t.size == 8)) {
        const nlohmann::json xmm = hit.value("xmm", nlohmann::json::array());
        return xmm.empty() ? "?" : t.format(xmm[0].get<uint64_t>());
    }
    if (t.kind == "other" || t.size > 8)
        return "?";
    return t.format(hit["regs"]["rax"].get<uint64_t>());
}

} // namespace

CallList list_calls(GdbMi& gdb, const FunctionInfo& function, uint64_t most)
{
    CallList list;
    list.function = function;
    list.most = most;
    const uint64_t entry = list.function.entry;
    CodePlaces places(gdb);
    list.object = places.at(entry).object;

    // One replay that stops at the entry and, from each call on, at its
    // return address: a return is the first stop there with the stack as
    // the call left it (recursion returns innermost first).
    nlohmann::json reply =
        tool_reply(gdb, fmt::format("rw-query begin end f{:x}{} most={}", entry, extras_wanted(function), most));
    // Where gdb shows the arguments: the first execution of the instruction
    // after the prologue, from the entry on.
    const uint64_t body = list.function.body;
    std::vector<size_t> call_of_record;
    for (const auto& h : reply["hits"]) {
        call_of_record.push_back(list.calls.size());
        if (h["kind"] == "return") {
            size_t record = h["call"].get<size_t>();
            if (record >= call_of_record.size() || call_of_record[record] >= list.calls.size())
                continue;
            CallRecord& c = list.calls[call_of_record[record]];
            c.returned = true;
            c.value = decode_return(list.function, h);
            c.returned_at = h["position"].get<std::string>();
            continue;
        }
        if (list.calls.size() >= most) {
            list.complete = false;
            break;
        }
        CallRecord c;
        c.thread = h["thread"].get<int64_t>();
        c.entry_position = c.position = h["position"].get<std::string>();
        if (body != entry)
            c.position += fmt::format("/b{:x}x1", body);
        c.return_address = h.contains("stack") ? little_endian_word(h["stack"].get<std::string>()) : 0;
        c.caller = places.at(c.return_address ? c.return_address - 1 : 0);
        c.args = decode_args(list.function, h);
        list.calls.push_back(std::move(c));
    }
    if (!reply.value("complete", true))
        list.complete = false;
    return list;
}
} // namespace rw::cli
