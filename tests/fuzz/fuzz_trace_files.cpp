// libFuzzer target: a whole trace directory's small files as a crafted
// trace could hold them: meta.json, end.json and the event stream's file
// (header and chunk framing). Opening and reading it must refuse cleanly.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "bytes.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_summary.h"

namespace {

std::filesystem::path scratch_trace()
{
    static std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("rewind-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d / rw::trace_files::kFiles);
        return d;
    }();
    return dir;
}

void put(const std::filesystem::path& file, const uint8_t* data, size_t size)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    // The input is split in three: meta.json | end.json | events.
    if (size < 2)
        return 0;
    size_t a = data[0] % (size - 1) + 1, b = a + data[1] % (size - a);
    auto dir = scratch_trace();
    put(dir / rw::trace_files::kMeta, data + 2, a > 2 ? a - 2 : 0);
    put(dir / rw::trace_files::kEnd, data + a, b - a);
    put(dir / rw::trace_files::kEvents, data + b, size - b);
    try {
        rw::Trace trace(dir);
        rw::TraceSummary s = rw::summarize(trace);
        for (const auto& hash : s.copies_named) {
            std::string why;
            (void)trace.verified_file_copy(hash, why);
        }
    } catch (const rw::FormatError&) {
    } catch (const rw::TraceDirError&) {
    }
    return 0;
}
