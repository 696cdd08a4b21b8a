// `rewind info --verify`: every file copy a trace holds, checked against
// the content hash that names it. (Every event's checksum is checked by
// reading the stream, as summarize() does.) A damaged copy is named with
// the file it stands for and the first event that uses it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rw {

class Trace;
struct TraceSummary;

struct CopyCheck {
    uint64_t intact = 0;               // copies whose content matches their name
    std::vector<std::string> problems; // one line per damaged, missing or misnamed copy
};

CopyCheck verify_file_copies(const Trace& trace, const TraceSummary& summary);

} // namespace rw
