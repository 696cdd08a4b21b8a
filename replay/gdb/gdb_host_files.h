// gdb's host I/O (vFile packets): with the default sysroot "target:", gdb
// reads the program and its shared libraries through the server. rewind
// serves the trace's copies, so the symbols always match the recorded code,
// even after the files on disk changed. Nothing else of the host is
// served, except the separate debug information of those very files (by
// build ID or under /usr/lib/debug): whoever can reach a server must not be
// able to read the machine's files through it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "unique_fd.h"

namespace rw {
class Trace;
}

namespace rw::replay {

class HostFiles {
public:
    // The trace's events are read at the first question, not here: a
    // debugging session whose gdb reads files from a local sysroot never
    // asks (and reading every event of a long recording takes a while).
    explicit HostFiles(const Trace& trace) : trace_(trace) {}

    // The reply to one vFile:… packet.
    std::string handle(const std::string& packet);
    // The trace's copy of a path the program mapped, or an empty string.
    std::string copy_of(const std::string& path) const;
    // A copy as copy_of() names it, opened as the trace's files are opened
    // and checked against its content hash; empty if it cannot be used.
    UniqueFd open_copy(const std::string& copy) const;
    // Every path the program mapped (as named, and canonical) -> its copy.
    const std::map<std::string, std::string>& copies() const
    {
        index();
        return copies_;
    }

private:
    void index() const;
    mutable bool indexed_ = false;
    mutable std::map<std::string, std::string> copies_;  // original path (canonical) -> copy
    mutable std::map<std::string, std::string> by_name_; // file name -> copy, when unambiguous
    mutable std::set<std::string> debug_files_;          // host paths of the copies' separate debug info
    const Trace& trace_;
    std::map<uint64_t, UniqueFd> open_;
    int next_fd_ = 100;
};

} // namespace rw::replay
