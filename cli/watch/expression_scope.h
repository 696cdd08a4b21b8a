// One meaning for a watched expression throughout a search. gdb resolves
// a name in the frame it has selected: where the replay stands inside a
// library, `flag` may be a parameter of the function there rather than the
// program's global. The search resolves EXPR's names once, in the scope the
// user means (the innermost frame at --at when --at is an exact position,
// else main's frame, else file scope), pins the globals and statics to their addresses,
// and evaluates that same expression at every probe, from the frame of the
// function whose locals it uses, if any.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gdb_mi.h"

namespace rw::cli {

// A name in an expression that gdb could resolve in a scope: not a member
// after `.` or `->`, not qualified (`file.c'::x`, `ns::x`), not a keyword,
// a struct tag or a convenience variable.
struct ExpressionName {
    size_t at = 0; // offset in the expression
    std::string name;
};
std::vector<ExpressionName> names_in(const std::string& expr);

// What `info address NAME` says a name is.
struct NameMeaning {
    enum class Kind { Static, Local, Other } kind = Kind::Other;
    uint64_t address = 0; // Static
};
NameMeaning parse_info_address(const std::string& name, const std::string& gdb_output);

class ExpressionScope {
public:
    enum class Where { AtFrame, Main, File };

    // Resolves `expr` where the replay stands (--at), in the frame the
    // user means: the innermost one if `at_frame`, else main's, else the
    // outermost (file scope).
    static ExpressionScope resolve(GdbMi& gdb, const std::string& expr, bool at_frame);

    // What gdb evaluates: the user's expression with its globals and
    // statics pinned to their addresses ({TYPE} ADDRESS).
    const std::string& expression() const { return pinned_; }
    // Selects the frame the expression is evaluated from; nullopt, or why
    // it cannot be evaluated here (the function whose locals it uses is not
    // running). Frame 0 is selected again by restore().
    std::optional<std::string> select(GdbMi& gdb) const;
    static void restore(GdbMi& gdb);
    // Where the plain names would mean something else here (in the
    // innermost frame): "flag: a local of __fstatat64"; empty if nowhere.
    std::vector<std::string> other_meanings_here(GdbMi& gdb) const;

    // For the report.
    std::string scope() const; // "main's frame", "file scope", …
    const std::vector<std::pair<std::string, std::string>>& names() const { return meanings_; } // name, meaning
    const std::string& locals_of() const { return function_; } // "" if EXPR uses no locals

private:
    struct Pinned {
        std::string name;
        uint64_t address = 0;
    };
    Where where_ = Where::Main;
    std::string user_;   // the expression as given
    std::string pinned_; // as evaluated
    std::string function_;
    std::vector<Pinned> pinned_names_;
    std::vector<std::pair<std::string, std::string>> meanings_;
};

} // namespace rw::cli
