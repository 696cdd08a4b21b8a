#include "query_gdb.h"

#include <fmt/core.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace rw::cli {
namespace {

// Functions gdb's Python defines for the queries: a type's class, a
// function's parameters from the block at its entry, an lvalue's address.
// Each prints one line of JSON.
constexpr const char* kPython = R"PY(
import json
def rw_type(ty):
    s = ty.strip_typedefs()
    kinds = {gdb.TYPE_CODE_INT: "int", gdb.TYPE_CODE_CHAR: "char", gdb.TYPE_CODE_BOOL: "bool",
             gdb.TYPE_CODE_ENUM: "enum", gdb.TYPE_CODE_PTR: "pointer", gdb.TYPE_CODE_FLT: "float"}
    signed = False
    try:
        signed = bool(s.is_signed)
    except Exception:
        pass
    target = str(s.target().strip_typedefs().unqualified()) if s.code == gdb.TYPE_CODE_PTR else ""
    return {"name": str(ty), "kind": kinds.get(s.code, "other"), "size": s.sizeof, "signed": signed, "target": target}
def rw_function(addr):
    b = gdb.block_for_pc(addr)
    while b is not None and b.function is None:
        b = b.superblock
    # (A function written in assembly has a line table but no types.)
    asm = b is not None and b.function.symtab is not None and b.function.symtab.filename.endswith((".S", ".s"))
    if b is None or b.start != addr or asm:
        print(json.dumps({"debug_info": False}))
        return
    f = b.function
    rt = f.type.target()
    print(json.dumps({"debug_info": True, "name": f.name, "end": b.end, "file": f.symtab.filename if f.symtab else "",
                      "line": f.line, "params": [{"name": s.name, "type": rw_type(s.type)} for s in b if s.is_argument],
                      "returns": None if rt is None or rt.code == gdb.TYPE_CODE_VOID else rw_type(rt)}))
def rw_lvalue(expr):
    try:
        v = gdb.parse_and_eval(expr)
        if v.type.strip_typedefs().code == gdb.TYPE_CODE_FUNC:
            print(json.dumps({"error": expr + " is a function: rewind calls lists its calls"}))
            return
        if v.address is None:
            print(json.dumps({"error": expr + " is not an lvalue (it has no address): name a variable, a field or *POINTER"}))
            return
        print(json.dumps({"address": int(v.address), "type": rw_type(v.type)}))
    except gdb.error as e:
        print(json.dumps({"error": str(e)}))
)PY";

nlohmann::json python_reply(GdbMi& gdb, const std::string& call)
{
    MiResult def = gdb.console("python exec(" + nlohmann::json(std::string(kPython)).dump() + ")");
    if (!def.ok())
        throw std::runtime_error("gdb cannot run Python, which the query needs: " + def.error());
    MiResult r = gdb.console("python " + call);
    std::string json = last_json_line(r.console);
    if (!r.ok() || json.empty())
        throw std::runtime_error("gdb: " + (r.ok() ? r.console : r.error()));
    return nlohmann::json::parse(json);
}

TypeInfo type_from(const nlohmann::json& j)
{
    TypeInfo t;
    t.name = j.value("name", "");
    t.kind = j.value("kind", "other");
    t.size = j.value("size", 0ull);
    t.is_signed = j.value("signed", false);
    t.target = j.value("target", "");
    return t;
}

std::optional<uint64_t> hex_after(const std::string& text, const std::string& marker)
{
    size_t at = text.find(marker);
    if (at == std::string::npos)
        return std::nullopt;
    return std::stoull(text.substr(at + marker.size()), nullptr, 16);
}

} // namespace

nlohmann::json tool_reply(GdbMi& gdb, const std::string& command)
{
    MiResult r = gdb.console("monitor " + command);
    if (!r.ok())
        throw std::runtime_error("the replay server failed on `" + command + "`: " + r.error());
    std::string json = last_json_line(r.console);
    if (json.empty())
        throw std::runtime_error("the replay server gave no answer to `" + command + "`: " + r.console);
    auto j = nlohmann::json::parse(json);
    if (j.contains("reply_file")) {
        // A long reply, written where the server was told (serve --reply-dir).
        std::string file = j["reply_file"].get<std::string>();
        std::ifstream in(file);
        if (!in)
            throw std::runtime_error("the replay server's reply to `" + command + "` is not in " + file);
        j = nlohmann::json::parse(in);
        std::filesystem::remove(file);
    }
    if (j.contains("error"))
        throw std::runtime_error(j["error"].get<std::string>());
    return j;
}

void go_to_end(GdbMi& gdb, const std::string& sysroot)
{
    tool_reply(gdb, "rw-goto end");
    std::string program = tool_reply(gdb, "rw-status").value("program", "");
    if (!program.empty() && !sysroot.empty()) {
        MiResult r = gdb.console("file " + sysroot + program);
        if (!r.ok())
            throw std::runtime_error("gdb cannot load " + program + ": " + r.error());
    }
    gdb.console("sharedlibrary");
    gdb.console("maintenance flush register-cache");
}

std::string TypeInfo::format(uint64_t low_bits) const
{
    std::vector<uint8_t> bytes(std::min<uint64_t>(size ? size : 8, 8));
    std::memcpy(bytes.data(), &low_bits, bytes.size());
    return format(bytes);
}

std::string TypeInfo::format(const std::vector<uint8_t>& bytes) const
{
    if (bytes.empty())
        return "(unreadable)";
    bool scalar = kind != "other" && bytes.size() <= 8 && (size == 0 || bytes.size() == size);
    if (!scalar) {
        std::string out = "{";
        for (size_t i = 0; i < bytes.size() && i < 32; i++)
            out += fmt::format("{}{:02x}", i ? " " : "", bytes[i]);
        return out + (bytes.size() > 32 ? " …}" : "}");
    }
    uint64_t v = 0;
    std::memcpy(&v, bytes.data(), bytes.size());
    size_t bits = bytes.size() * 8;
    int64_t sv = static_cast<int64_t>(v);
    if (bits < 64 && is_signed && (v >> (bits - 1)) & 1)
        sv = static_cast<int64_t>(v | (~0ull << bits));
    if (kind == "pointer")
        return fmt::format("{:#x}", v);
    if (kind == "bool")
        return v ? "true" : "false";
    if (kind == "float") {
        if (bytes.size() == 4) {
            float f;
            std::memcpy(&f, &v, 4);
            return fmt::format("{}", f);
        }
        double d;
        std::memcpy(&d, &v, 8);
        return fmt::format("{}", d);
    }
    std::string number = is_signed ? std::to_string(sv) : std::to_string(v);
    if (kind == "char" && v >= 0x20 && v < 0x7f)
        return number + fmt::format(" '{}'", static_cast<char>(v));
    return number;
}

std::string FunctionInfo::signature() const
{
    if (!has_debug_info)
        return name;
    std::string out = (returns ? returns->name : "void") + " " + name + "(";
    for (size_t i = 0; i < params.size(); i++) {
        const std::string& t = params[i].type.name;
        out += (i ? ", " : "") + t + (t.ends_with('*') ? "" : " ") + params[i].name;
    }
    return out + ")";
}

FunctionInfo function_info(GdbMi& gdb, const std::string& name)
{
    static const std::regex plain_name("[A-Za-z_][A-Za-z0-9_:.@]*");
    if (!std::regex_match(name, plain_name))
        throw QueryInputError("not a function name: " + name);
    MiResult r = gdb.console("info address " + name);
    std::string said = r.ok() ? r.console : r.error();
    std::optional<uint64_t> entry;
    if (said.find("is a function at address 0x") != std::string::npos)
        entry = hex_after(said, "is a function at address 0x");
    else if (said.find("compiled without debugging") != std::string::npos)
        entry = hex_after(said, " is at 0x");
    if (!entry) {
        while (!said.empty() && (said.back() == '\n' || said.back() == '.'))
            said.pop_back();
        throw QueryInputError(name +
                              " is not a function of the program or its libraries where the recording "
                              "ends (gdb: " +
                              said + ")");
    }
    // Before its library is loaded, a library's function is the program's
    // PLT stub of that name, which only the program's own calls go through.
    MiResult where = gdb.console(fmt::format("info symbol {:#x}", *entry));
    if (where.console.find("@plt") != std::string::npos || where.console.find("section .plt") != std::string::npos)
        throw QueryInputError(name + " is only the program's PLT stub of a library's function where the replay is");
    FunctionInfo f;
    f.name = name;
    f.entry = *entry;
    nlohmann::json j = python_reply(gdb, fmt::format("rw_function({})", *entry));
    f.has_debug_info = j.value("debug_info", false);
    f.body = f.entry;
    if (f.has_debug_info) {
        // Where `break NAME` stops, after the prologue: there gdb reads the
        // parameters from their places (a breakpoint never inserted: the
        // replay does not move before it is deleted).
        MiResult b = gdb.command("-break-insert -t " + mi_quote(name));
        if (const MiValue* bkpt = b.ok() ? b.values.get("bkpt") : nullptr) {
            std::string addr = bkpt->str("addr");
            uint64_t end = j.value("end", 0ull);
            if (addr.rfind("0x", 0) == 0) {
                uint64_t at = std::stoull(addr, nullptr, 16);
                if (at >= f.entry && at < end)
                    f.body = at;
            }
            gdb.command("-break-delete " + bkpt->str("number"));
        }
        f.file = j.value("file", "");
        f.line = j.value("line", 0);
        for (const auto& p : j["params"])
            f.params.push_back({p.value("name", ""), type_from(p["type"])});
        if (!j["returns"].is_null())
            f.returns = type_from(j["returns"]);
    }
    return f;
}

LvalueInfo lvalue_info(GdbMi& gdb, const std::string& expr)
{
    nlohmann::json j = python_reply(gdb, "rw_lvalue(" + nlohmann::json(expr).dump() + ")");
    if (j.contains("error"))
        throw QueryInputError(j["error"].get<std::string>());
    return {j["address"].get<uint64_t>(), type_from(j["type"])};
}

std::string CodePlace::describe() const
{
    std::string out = function.empty() ? "??" : function;
    if (!file.empty())
        return out + fmt::format(" ({}:{})", file, line);
    if (!object.empty())
        return out + " in " + object;
    return out;
}

const CodePlace& CodePlaces::at(uint64_t pc)
{
    if (auto it = known_.find(pc); it != known_.end())
        return it->second;
    std::optional<CodePlace> p = lookup(pc);
    if (!p) {
        gdb_.console("sharedlibrary");
        p = lookup(pc);
    }
    if (!p && may_move_ && !loaded_at_end_) {
        loaded_at_end_ = true;
        tool_reply(gdb_, "rw-goto end");
        gdb_.console("sharedlibrary");
        p = lookup(pc);
    }
    if (!p) {
        p = CodePlace{};
        p->function = fmt::format("{:#x}", pc);
    }
    return known_.emplace(pc, *p).first->second;
}

std::optional<CodePlace> CodePlaces::lookup(uint64_t pc)
{
    CodePlace p;
    static const std::regex symbol(R"(^(\S+)(?: \+ \d+)? in section \S+(?: of (\S+))?)");
    static const std::regex line(R"re(^Line (\d+) of "([^"]+)")re");
    std::smatch m;
    MiResult s = gdb_.console(fmt::format("info symbol {:#x}", pc));
    if (s.ok() && std::regex_search(s.console, m, symbol)) {
        p.function = m[1];
        std::string object = m[2];
        if (object.rfind("target:", 0) == 0)
            object = object.substr(7);
        if (size_t slash = object.rfind('/'); slash != std::string::npos)
            object = object.substr(slash + 1);
        // gdb names the program by the trace's copy it loaded (a content
        // hash): the recorded name instead.
        static const std::regex content_hash("[0-9a-f]{32}");
        if (std::regex_match(object, content_hash)) {
            if (program_.empty())
                program_ = tool_reply(gdb_, "rw-status").value("program", object);
            object = program_.substr(program_.rfind('/') + 1);
        }
        p.object = object;
    }
    MiResult l = gdb_.console(fmt::format("info line *{:#x}", pc));
    if (l.ok() && std::regex_search(l.console, m, line)) {
        p.line = std::stoi(m[1]);
        p.file = m[2];
    }
    if (p.function.empty() && p.file.empty())
        return std::nullopt;
    return p;
}

} // namespace rw::cli
