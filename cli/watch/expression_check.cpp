#include "expression_check.h"

#include <algorithm>
#include <cctype>
#include <regex>

namespace rw::cli {
namespace {

// A name in EXPR gdb does not know replaced by 0, so that gdb parses on:
// "", if it cannot be done safely (in a cast's parentheses a type name
// becomes no type at all, which would read as a syntax error).
std::string without_name(const std::string& expr, const std::string& name)
{
    auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::string out;
    bool replaced = false;
    for (size_t i = 0; i < expr.size();) {
        char c = expr[i];
        if (c == '"' || c == '\'') { // a literal: copied as it is
            size_t j = i + 1;
            while (j < expr.size() && expr[j] != c)
                j += expr[j] == '\\' ? 2 : 1;
            out.append(expr, i, std::min(j + 1, expr.size()) - i);
            i = j + 1;
            continue;
        }
        if (!is_word(c)) {
            out += c;
            i++;
            continue;
        }
        size_t j = i;
        while (j < expr.size() && is_word(expr[j]))
            j++;
        std::string word = expr.substr(i, j - i);
        size_t before = out.find_last_not_of(" \t");
        char prev = before == std::string::npos ? 0 : out[before];
        bool member = prev == '.' || (prev == '>' && before > 0 && out[before - 1] == '-') || prev == ':';
        if (word == name && !member) {
            size_t after = expr.find_first_not_of(" \t", j);
            char next = after == std::string::npos ? 0 : expr[after];
            if (prev == '(' && (next == ')' || next == '*'))
                return ""; // `(name)x` or `(name *)p`: a type gdb does not know
            out += "0";
            replaced = true;
        } else {
            out += word;
        }
        i = j;
    }
    return replaced ? out : "";
}

} // namespace

std::optional<std::string> parse_error(GdbMi& gdb, const std::string& expr)
{
    std::string text = expr;
    constexpr int kNames = 16;
    for (int i = 0; i < kNames; i++) {
        // (Not ptype: it takes an expression's leading '/' for its flags.)
        MiResult r = gdb.command("-data-evaluate-expression " + mi_quote(text));
        if (r.ok())
            return std::nullopt;
        const std::string error = r.error();
        if (is_parse_error(error))
            return error;
        std::smatch m;
        static const std::regex unknown(R"re(No symbol "([A-Za-z_][A-Za-z0-9_]*)" in current context)re");
        if (!std::regex_search(error, m, unknown))
            return std::nullopt; // anything else is for the search to find out
        text = without_name(text, m[1]);
        if (text.empty())
            return std::nullopt;
    }
    return std::nullopt;
}

} // namespace rw::cli
