// Whether gdb can parse an expression, told apart from whether it can
// evaluate it: `rewind watch` says a syntax error before it replays
// anything, although the names EXPR uses may exist only where it looks.
#pragma once

#include <optional>
#include <string>

#include "gdb_mi.h"

namespace rw::cli {

// gdb's message if it cannot parse `expr`, in the program it holds now.
// gdb stops at the first name it does not know (a local of a function not
// running, a program without symbols yet): such names are set aside (read
// as 0) and the rest parsed again. nullopt: it parses, or that cannot be
// told. gdb evaluates what it parsed: with a live process, calls run.
std::optional<std::string> parse_error(GdbMi& gdb, const std::string& expr);

} // namespace rw::cli
