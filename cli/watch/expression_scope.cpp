#include "expression_scope.h"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace rw::cli {
namespace {

bool is_name_start(char c)
{
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}

bool is_name_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Words of C and C++ that are not names of objects.
const std::set<std::string>& keywords()
{
    static const std::set<std::string> words{"sizeof",     "alignof",      "_Alignof",
                                             "struct",     "union",        "enum",
                                             "class",      "typename",     "unsigned",
                                             "signed",     "int",          "char",
                                             "short",      "long",         "float",
                                             "double",     "void",         "_Bool",
                                             "bool",       "const",        "volatile",
                                             "true",       "false",        "nullptr",
                                             "this",       "static_cast",  "reinterpret_cast",
                                             "const_cast", "dynamic_cast", "new",
                                             "delete",     "operator",     "__int128",
                                             "wchar_t",    "char16_t",     "char32_t",
                                             "decltype",   "typeof"};
    return words;
}

// The last character before `at` that is not a space ('\0' if none), and the one before it.
std::pair<char, char> before(const std::string& s, size_t at)
{
    size_t i = at;
    while (i > 0 && std::isspace(static_cast<unsigned char>(s[i - 1])))
        i--;
    char c1 = i > 0 ? s[i - 1] : '\0';
    char c2 = i > 1 ? s[i - 2] : '\0';
    return {c1, c2};
}

bool followed_by_scope(const std::string& s, size_t end)
{
    size_t i = end;
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i])))
        i++;
    return s.compare(i, 2, "::") == 0;
}

std::string first_line(const std::string& s)
{
    std::string line = s.substr(0, s.find('\n'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
    return line;
}

// The functions of the selected thread's frames, innermost first.
std::vector<std::string> frame_functions(GdbMi& gdb)
{
    std::vector<std::string> out;
    MiResult r = gdb.command("-stack-list-frames 0 256");
    const MiValue* stack = r.ok() ? r.values.get("stack") : nullptr;
    for (size_t i = 0; stack && i < stack->items.size(); i++)
        out.push_back(stack->items[i].second.str("func"));
    return out;
}

void select_frame(GdbMi& gdb, size_t level)
{
    gdb.command("-stack-select-frame " + std::to_string(level));
}

std::string info_address(GdbMi& gdb, const std::string& name)
{
    MiResult r = gdb.console("info address " + name);
    return r.ok() ? r.console : r.error();
}

} // namespace

std::vector<ExpressionName> names_in(const std::string& expr)
{
    std::vector<ExpressionName> out;
    bool tag_next = false; // after struct/union/enum/class
    for (size_t i = 0; i < expr.size();) {
        char c = expr[i];
        if (c == '"' || c == '\'') {
            // A string, a character, or gdb's 'file.c' of 'file.c'::name.
            size_t j = i + 1;
            while (j < expr.size() && expr[j] != c)
                j += expr[j] == '\\' ? 2 : 1;
            i = std::min(j + 1, expr.size());
            continue;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            while (i < expr.size() && (is_name_char(expr[i]) || expr[i] == '.'))
                i++; // 0x1f, 1e5, 2.5f
            continue;
        }
        if (!is_name_start(c)) {
            i++;
            continue;
        }
        size_t start = i;
        while (i < expr.size() && is_name_char(expr[i]))
            i++;
        std::string word = expr.substr(start, i - start);
        auto [c1, c2] = before(expr, start);
        bool member = c1 == '.' || (c1 == '>' && c2 == '-');
        bool qualified = (c1 == ':' && c2 == ':') || followed_by_scope(expr, i);
        bool convenience = start > 0 && expr[start - 1] == '$';
        bool tag = std::exchange(tag_next, false);
        if (keywords().count(word)) {
            tag_next = word == "struct" || word == "union" || word == "enum" || word == "class";
            continue;
        }
        if (!member && !qualified && !convenience && !tag)
            out.push_back({start, word});
    }
    return out;
}

NameMeaning parse_info_address(const std::string& name, const std::string& out)
{
    NameMeaning m;
    std::string head = "Symbol \"" + name + "\" is ";
    size_t at = out.find(head);
    if (at == std::string::npos)
        return m; // no such symbol here, or a minimal symbol ("… is at 0x… in a file compiled without debugging")
    std::string what = out.substr(at + head.size());
    const std::string statics = "static storage at address ";
    if (what.rfind(statics, 0) == 0) {
        m.kind = NameMeaning::Kind::Static;
        m.address = std::strtoull(what.c_str() + statics.size(), nullptr, 0);
        return m;
    }
    for (const char* other : {"a function", "constant", "a thread-local", "at 0x", "an alias", "a typedef"})
        if (what.rfind(other, 0) == 0)
            return m;
    // A variable at a frame base, in a register, an argument, a computed
    // location, optimized out: the frame's own.
    m.kind = NameMeaning::Kind::Local;
    return m;
}

ExpressionScope ExpressionScope::resolve(GdbMi& gdb, const std::string& expr, bool at_frame)
{
    ExpressionScope s;
    s.user_ = s.pinned_ = expr;
    std::vector<std::string> functions = frame_functions(gdb);
    size_t level = 0;
    auto main_frame = std::find(functions.begin(), functions.end(), "main");
    if (at_frame) {
        s.where_ = Where::AtFrame;
    } else if (main_frame != functions.end()) {
        s.where_ = Where::Main;
        level = static_cast<size_t>(main_frame - functions.begin());
    } else {
        s.where_ = Where::File;
        level = functions.empty() ? 0 : functions.size() - 1;
    }
    std::string scope_function = level < functions.size() ? functions[level] : "";
    select_frame(gdb, level);

    std::map<std::string, std::string> replacement;
    bool locals = false;
    std::set<std::string> seen;
    for (const ExpressionName& n : names_in(expr)) {
        if (!seen.insert(n.name).second)
            continue;
        NameMeaning m = parse_info_address(n.name, info_address(gdb, n.name));
        if (m.kind == NameMeaning::Kind::Local) {
            locals = true;
            s.meanings_.emplace_back(n.name, "a local of " + (scope_function.empty() ? "??" : scope_function));
        } else if (m.kind == NameMeaning::Kind::Static) {
            MiResult t = gdb.console("whatis " + n.name);
            std::string type = t.ok() ? first_line(t.console) : "";
            type = type.rfind("type = ", 0) == 0 ? type.substr(7) : "";
            std::string meaning = fmt::format("the variable at {:#x}", m.address);
            // (An anonymous struct's type cannot be written back.)
            if (!type.empty() && type.find("{...}") == std::string::npos) {
                replacement[n.name] = fmt::format("({{{}}} {:#x})", type, m.address);
                s.pinned_names_.push_back({n.name, m.address});
                meaning += " (" + type + ")";
            }
            s.meanings_.emplace_back(n.name, meaning);
        }
    }
    if (!replacement.empty()) {
        std::vector<ExpressionName> names = names_in(expr);
        std::string pinned = expr;
        for (auto it = names.rbegin(); it != names.rend(); ++it)
            if (auto r = replacement.find(it->name); r != replacement.end())
                pinned.replace(it->at, it->name.size(), r->second);
        // Pinned, it must mean what it meant here: else the plain one stays.
        MiResult plain = gdb.command("-data-evaluate-expression " + mi_quote(expr));
        MiResult fixed = gdb.command("-data-evaluate-expression " + mi_quote(pinned));
        if (fixed.ok() && (!plain.ok() || plain.values.str("value") == fixed.values.str("value")))
            s.pinned_ = pinned;
        else
            s.pinned_names_.clear();
    }
    if (locals)
        s.function_ = scope_function;
    restore(gdb);
    return s;
}

std::optional<std::string> ExpressionScope::select(GdbMi& gdb) const
{
    std::vector<std::string> functions = frame_functions(gdb);
    const std::string& want = function_.empty() ? std::string("main") : function_;
    auto frame = std::find(functions.begin(), functions.end(), want);
    if (frame != functions.end()) {
        select_frame(gdb, static_cast<size_t>(frame - functions.begin()));
        return std::nullopt;
    }
    if (!function_.empty())
        return function_ + " is not running here (the expression uses its locals)";
    if (functions.size() > 1)
        select_frame(gdb, functions.size() - 1); // file scope
    return std::nullopt;
}

void ExpressionScope::restore(GdbMi& gdb)
{
    select_frame(gdb, 0);
}

std::vector<std::string> ExpressionScope::other_meanings_here(GdbMi& gdb) const
{
    std::vector<std::string> out;
    if (pinned_names_.empty())
        return out;
    std::vector<std::string> functions = frame_functions(gdb);
    std::string here = functions.empty() || functions[0].empty() ? "the innermost frame" : functions[0];
    for (const Pinned& p : pinned_names_) {
        std::string said = info_address(gdb, p.name);
        NameMeaning m = parse_info_address(p.name, said);
        if (m.kind == NameMeaning::Kind::Local)
            out.push_back(fmt::format("{}: a local of {}", p.name, here));
        else if (m.kind == NameMeaning::Kind::Static && m.address != p.address)
            out.push_back(fmt::format("{}: the variable at {:#x} in {}", p.name, m.address, here));
    }
    return out;
}

std::string ExpressionScope::scope() const
{
    switch (where_) {
    case Where::AtFrame:
        return function_.empty() ? "the innermost frame at --at" : "the frame of " + function_ + " at --at";
    case Where::Main:
        return "main's frame";
    case Where::File:
        return "file scope";
    }
    return "";
}

} // namespace rw::cli
