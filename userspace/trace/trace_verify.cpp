#include "trace_verify.h"

#include <algorithm>
#include <filesystem>

#include "bytes.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_summary.h"

namespace rw {

CopyCheck verify_file_copies(const Trace& trace, const TraceSummary& summary)
{
    CopyCheck out;
    auto check = [&](const std::string& name, const std::string& what) {
        std::string why;
        try {
            if (!trace.verified_file_copy(name, why).empty()) {
                out.intact++;
                return;
            }
        } catch (const FormatError& e) { // a name that is not a content hash
            why = e.what();
        }
        out.problems.push_back(what + ": " + why);
    };
    for (const auto& [name, use] : summary.copies_named)
        check(name, "at event " + std::to_string(use.first_event) + ", the copy of " + use.path);

    // Copies no event names (events lost after them, or files put there):
    // replay never opens them, but they are part of what was handed over.
    std::vector<std::string> others;
    std::error_code ec;
    std::filesystem::path files = trace.dir() / trace_files::kFiles;
    auto type = std::filesystem::symlink_status(files, ec).type();
    if (type != std::filesystem::file_type::directory) {
        // Not listed through a link: it would tell the names in whatever it leads to.
        if (type != std::filesystem::file_type::not_found)
            out.problems.push_back(std::string(trace_files::kFiles) +
                                   " is not a directory of the trace (a link or another file, never followed)");
        return out;
    }
    for (const auto& f : std::filesystem::directory_iterator(files, ec)) {
        std::string name = f.path().filename().string();
        // (".incoming.PID": a copy the recorder was writing when it was killed)
        if (!name.starts_with(".") && !summary.copies_named.count(name))
            others.push_back(name);
    }
    std::sort(others.begin(), others.end());
    for (const auto& name : others) {
        if (is_content_hash(name))
            check(name, std::string(trace_files::kFiles) + "/" + name + ", which no event names");
        else
            out.problems.push_back(std::string(trace_files::kFiles) + "/" + name +
                                   " is not a copy rewind writes (its name is not a content hash)");
    }
    return out;
}

} // namespace rw
