// What the CRIU landmark files share: running criu and reading what it
// says when it fails, and the ptrace and environment helpers both its dump
// and its restore need. Not for use outside them.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace rw::replay::criu_support {

// "WHAT: strerror(errno)".
std::string errno_text(const std::string& what);
bool executable(const std::string& path);
// The last n lines of a file ("" if it cannot be read).
std::string last_lines(const std::filesystem::path& file, size_t n);
std::string trimmed(std::string s);
// What to say when criu ended with `status`: the error lines of its log first.
std::string criu_failure(const std::string& what, int status, const std::string& printed,
                         const std::filesystem::path& log);
// PTRACE_SEIZE of a thread in a group stop, left stopped.
void seize_stopped(pid_t tid, unsigned long options);
// This process's environment with `extra` added.
std::vector<std::string> environment_with(const std::vector<std::string>& extra);

} // namespace rw::replay::criu_support
