// Seed corpus for the fuzz targets: decoder inputs (a few encoded events of
// each kind) from the unit tests' sample events and, if given, from a real
// recording, whose files also seed the trace-files target in each of its
// modes (see fuzz_trace_files.cpp).
//
//   make_seeds CORPUS_DIR [TRACE_DIR]
//
// Writes CORPUS_DIR/fuzz_event_decode/* and CORPUS_DIR/fuzz_trace_files/*.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "event_codec.h"
#include "event_samples.h"
#include "trace.h"
#include "trace_dir.h"

namespace fs = std::filesystem;

namespace {

constexpr size_t kPerSeed = 4;      // events in one decoder seed
constexpr size_t kSeedsPerKind = 8; // seeds that start with an event of each kind

void write(const fs::path& file, const std::vector<uint8_t>& bytes)
{
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<uint8_t> slurp(const fs::path& file)
{
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

// Payloads of kPerSeed events, starting at up to kSeedsPerKind events of
// each kind; returns how many were written.
size_t decoder_seeds(const std::vector<rw::Event>& events, const fs::path& dir, const std::string& prefix)
{
    std::map<std::string, size_t> per_kind;
    size_t written = 0;
    for (size_t i = 0; i < events.size(); i++) {
        std::string kind(rw::event_kind_name(events[i]));
        if (per_kind[kind]++ >= kSeedsPerKind)
            continue;
        std::vector<uint8_t> payload;
        for (size_t j = i; j < events.size() && j < i + kPerSeed; j++)
            rw::encode_event(events[j], payload);
        write(dir / (prefix + "-" + kind + "-" + std::to_string(i)), payload);
        written++;
    }
    return written;
}

// mode u8, layout u8, meta.json and end.json sizes u16, then the files.
std::vector<uint8_t> trace_files_seed(uint8_t mode, const std::vector<uint8_t>& meta, const std::vector<uint8_t>& end,
                                      const std::vector<uint8_t>& rest, uint8_t layout = 0)
{
    std::vector<uint8_t> seed = {mode,
                                 layout,
                                 static_cast<uint8_t>(meta.size()),
                                 static_cast<uint8_t>(meta.size() >> 8),
                                 static_cast<uint8_t>(end.size()),
                                 static_cast<uint8_t>(end.size() >> 8)};
    seed.insert(seed.end(), meta.begin(), meta.end());
    seed.insert(seed.end(), end.begin(), end.end());
    seed.insert(seed.end(), rest.begin(), rest.end());
    return seed;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: make_seeds CORPUS_DIR [TRACE_DIR]\n");
        return 2;
    }
    fs::path decode = fs::path(argv[1]) / "fuzz_event_decode", files = fs::path(argv[1]) / "fuzz_trace_files";
    fs::create_directories(decode);
    fs::create_directories(files);
    size_t n = decoder_seeds(rw::testing::sample_events(200), decode, "sample");
    if (argc > 2) {
        fs::path trace_dir = argv[2];
        rw::Trace trace(trace_dir);
        std::vector<rw::Event> events;
        rw::EventStreamReader reader = trace.events();
        for (rw::Event e; reader.next(e);)
            events.push_back(e);
        n += decoder_seeds(events, decode, "real");
        auto meta = slurp(trace_dir / rw::trace_files::kMeta), end = slurp(trace_dir / rw::trace_files::kEnd);
        auto stream = slurp(trace_dir / rw::trace_files::kEvents);
        if (meta.size() > 0xffff || end.size() > 0xffff) { // (sizes are u16 in the seed)
            std::printf("make_seeds: %zu seeds in %s (meta.json too large to seed the trace files)\n", n, argv[1]);
            return 0;
        }
        write(files / "real-raw", trace_files_seed(0, meta, end, stream));
        write(files / "real-resealed", trace_files_seed(1, meta, end, stream));
        // Mode 2 claims mode / 3 + 1 events: the first few of the recording.
        const size_t claimed = 16;
        std::vector<uint8_t> payload;
        for (size_t i = 0; i < events.size() && i < claimed; i++)
            rw::encode_event(events[i], payload);
        write(files / "real-sealed", trace_files_seed(2 + 3 * (claimed - 1), meta, end, payload));
        n += 3;
        // The real trace with one of its files replaced by a link, a FIFO
        // or a directory (the layout byte, see fuzz_trace_files.cpp).
        for (uint8_t which = 1; which <= 5; which++)
            for (uint8_t kind = 0; kind < 4; kind++, n++)
                write(files / ("real-odd-" + std::to_string(which) + "-" + std::to_string(kind)),
                      trace_files_seed(1, meta, end, stream, static_cast<uint8_t>(which | kind << 3)));
    }
    std::printf("make_seeds: %zu seeds in %s\n", n, argv[1]);
    return 0;
}
