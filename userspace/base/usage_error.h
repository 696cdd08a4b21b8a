// A problem the user can fix (a bad command, a missing privilege, a trace
// that is not there): reported in one line with its own exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace rw {

struct UsageError : std::runtime_error {
    UsageError(const std::string& message, int exit_code = 2) : std::runtime_error(message), exit_code(exit_code) {}
    int exit_code;
};

} // namespace rw
