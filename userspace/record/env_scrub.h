// Environment variables a recording must not keep (tokens, passwords):
// the program sees their values while it is recorded; the trace keeps a
// placeholder of the same length (so the replayed program's initial stack
// is laid out exactly as recorded), and the replayed program sees that.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace rw {

class EnvScrub {
public:
    EnvScrub() = default;
    explicit EnvScrub(std::set<std::string> names) : names_(std::move(names)) {}

    bool empty() const { return names_.empty(); }
    const std::set<std::string>& names() const { return names_; }
    // NAME=value becomes NAME=***** (as many as the value had) for a
    // scrubbed NAME; other entries are unchanged.
    std::string apply(const std::string& entry) const;
    void apply(std::vector<std::string>& envp) const;

private:
    std::set<std::string> names_;
};

} // namespace rw
