#include "expression_check.h"

#include <regex>
#include <vector>

#include "expression_scope.h"

namespace rw::cli {
namespace {

// A name in EXPR gdb does not know replaced by 0, so that gdb parses on:
// "", if it cannot be done safely (in a cast's parentheses a type name
// becomes no type at all, which would read as a syntax error).
std::string without_name(const std::string& expr, const std::string& name)
{
    std::string out = expr;
    bool replaced = false;
    std::vector<ExpressionName> names = names_in(expr);
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
        if (it->name != name)
            continue;
        size_t before = expr.find_last_not_of(" \t", it->at == 0 ? std::string::npos : it->at - 1);
        size_t after = expr.find_first_not_of(" \t", it->at + name.size());
        char prev = it->at == 0 || before == std::string::npos ? 0 : expr[before];
        char next = after == std::string::npos ? 0 : expr[after];
        if (prev == '(' && (next == ')' || next == '*'))
            return ""; // `(name)x` or `(name *)p`: a type gdb does not know
        out.replace(it->at, name.size(), "0");
        replaced = true;
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
