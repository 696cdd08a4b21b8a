// libFuzzer target: a trace directory as a crafted trace could hold it
// (meta.json, end.json, the event stream, an empty files/), read the way
// info, info --verify and replay read it. Whatever the bytes, opening and
// reading it must refuse cleanly, never crash.
//
// A crafted trace's files need not be files: the layout byte replaces one
// of them (low 3 bits: 1 meta.json, 2 end.json, 3 events, 4 files/, 5 a
// copy in files/; others none) by (bits 3-4) 0 a symbolic link to a secret
// file outside the trace, 1 a FIFO, 2 a directory, 3 a link to /dev/zero.
// Reading must neither block nor end, and no message may hold the secret.
//
// Input: mode u8, layout u8, meta.json size u16, end.json size u16
// (little-endian), meta.json, end.json, then the rest by mode % 3:
//   0  the events file as is (checksums will mostly stop it early);
//   1  the same with every chunk's checksums recomputed, as a crafted
//      trace has them: the sizes in a header reach the reader;
//   2  one chunk's uncompressed payload, sealed into a valid stream
//      claiming mode / 3 + 1 events: the decoder and everything after it.
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <string_view>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bytes.h"
#include "event_source.h"
#include "trace.h"
#include "trace_dir.h"
#include "trace_summary.h"
#include "trace_verify.h"

namespace {

constexpr size_t kFileHeader = 16, kChunkHeader = 40;
constexpr uint32_t kChunkMagic = 0x4b435752;

std::filesystem::path scratch_trace()
{
    static std::filesystem::path dir = [] {
        auto d = std::filesystem::temp_directory_path() / ("rewind-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d / rw::trace_files::kFiles);
        return d;
    }();
    return dir;
}

// What the secret file outside the trace holds: the start of a JSON
// string, so that a parser's error would quote it.
constexpr const char* kSecret = "\"fuzz-secret-7f3a9c";

std::filesystem::path secret_file()
{
    // Removed when the fuzzer exits, with the scratch trace.
    static struct Secret {
        std::filesystem::path file =
            std::filesystem::temp_directory_path() / ("rewind-fuzz-secret-" + std::to_string(::getpid()));
        Secret() { std::ofstream(file) << kSecret << "\n"; }
        ~Secret()
        {
            std::error_code ec;
            std::filesystem::remove(file, ec);
            std::filesystem::remove_all(scratch_trace(), ec);
        }
    } secret;
    return secret.file;
}

// Replaces `file` (whatever it is now) by the odd thing `kind` names.
void make_odd(const std::filesystem::path& file, unsigned kind)
{
    std::error_code ec;
    std::filesystem::remove_all(file, ec);
    switch (kind) {
    case 0:
        std::filesystem::create_symlink(secret_file(), file, ec);
        break;
    case 1:
        ::mkfifo(file.c_str(), 0600);
        break;
    case 2:
        std::filesystem::create_directory(file, ec);
        break;
    default:
        std::filesystem::create_symlink("/dev/zero", file, ec);
        break;
    }
}

// The input itself holds the marker (the fuzzer's dictionary puts it
// there): a message may then quote the trace's own bytes (a recorded path),
// which is not the linked file's.
bool input_has_marker = false;

void fail_if_quoted(const char* message)
{
    if (!input_has_marker && std::strstr(message, "fuzz-secret") != nullptr) {
        std::fprintf(stderr, "a message quotes a file the trace links to: %s\n", message);
        std::abort();
    }
}

void put(const std::filesystem::path& file, const uint8_t* data, size_t size)
{
    std::error_code ec;
    std::filesystem::remove_all(file, ec); // (a FIFO left by the last input would block the write)
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

template <typename T> void store(std::vector<uint8_t>& v, size_t at, T value)
{
    std::memcpy(v.data() + at, &value, sizeof value);
}

// Recomputes each chunk's payload and header checksums, as far as the
// chunks' magic numbers lead.
void reseal(std::vector<uint8_t>& f)
{
    size_t at = kFileHeader;
    while (at + kChunkHeader <= f.size()) {
        uint32_t magic, size;
        std::memcpy(&magic, f.data() + at, 4);
        std::memcpy(&size, f.data() + at + 4, 4);
        if (magic != kChunkMagic)
            return;
        size_t payload = std::min<size_t>(size, f.size() - at - kChunkHeader);
        store<uint64_t>(f, at + 24, XXH64(f.data() + at + kChunkHeader, payload, 0));
        store<uint32_t>(f, at + 36, XXH32(f.data() + at, 36, 0));
        at += kChunkHeader + payload;
    }
}

// A stream of one chunk holding `payload` and claiming `events` events.
std::vector<uint8_t> sealed(const uint8_t* payload, size_t size, uint32_t events)
{
    std::vector<uint8_t> f(kFileHeader + kChunkHeader + ZSTD_compressBound(size));
    std::memcpy(f.data(), "REWINDEV", 8);
    store<uint32_t>(f, 8, rw::kTraceFormatVersion);
    size_t n =
        ZSTD_compress(f.data() + kFileHeader + kChunkHeader, f.size() - kFileHeader - kChunkHeader, payload, size, 1);
    if (ZSTD_isError(n))
        return {};
    f.resize(kFileHeader + kChunkHeader + n);
    store<uint32_t>(f, kFileHeader, kChunkMagic);
    store<uint32_t>(f, kFileHeader + 4, static_cast<uint32_t>(n));
    store<uint32_t>(f, kFileHeader + 8, static_cast<uint32_t>(size));
    store<uint32_t>(f, kFileHeader + 12, events);
    reseal(f);
    return f;
}

// The replayer's walk through the stream: in order, ahead per thread,
// back to checkpoints.
void walk_like_replay(const rw::Trace& trace)
{
    rw::replay::EventSource source(trace.events());
    for (int step = 0; step < 4096; step++) {
        const rw::replay::IndexedEvent* e = source.peek();
        if (!e)
            break;
        rw::Tid tid = rw::event_tid(e->event);
        if (step % 61 == 3) {
            auto checkpoint = source.checkpoint();
            (void)source.peek_for_task(tid, 2);
            source.restore(checkpoint);
        }
        if (step % 5 == 1)
            (void)source.take_for_task(tid);
        else
            (void)source.next();
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    constexpr size_t kHeader = 6;
    if (size < kHeader)
        return 0;
    static const std::string_view marker = "fuzz-secret";
    input_has_marker = std::search(data, data + size, marker.begin(), marker.end()) != data + size;
    uint8_t mode = data[0];
    uint8_t layout = data[1];
    size_t meta = std::min<size_t>(data[2] | data[3] << 8, size - kHeader);
    size_t end = std::min<size_t>(data[4] | data[5] << 8, size - kHeader - meta);
    const uint8_t* rest = data + kHeader + meta + end;
    size_t rest_size = size - kHeader - meta - end;
    auto dir = scratch_trace();
    std::error_code ec;
    auto files = dir / rw::trace_files::kFiles;
    std::filesystem::remove_all(files, ec);
    std::filesystem::create_directory(files, ec);
    put(dir / rw::trace_files::kMeta, data + kHeader, meta);
    put(dir / rw::trace_files::kEnd, data + kHeader + meta, end);
    std::vector<uint8_t> events(rest, rest + rest_size);
    if (mode % 3 == 1)
        reseal(events);
    else if (mode % 3 == 2)
        events = sealed(rest, rest_size, mode / 3 + 1u);
    put(dir / rw::trace_files::kEvents, events.data(), events.size());
    switch (layout & 7) {
    case 1:
        make_odd(dir / rw::trace_files::kMeta, layout >> 3 & 3);
        break;
    case 2:
        make_odd(dir / rw::trace_files::kEnd, layout >> 3 & 3);
        break;
    case 3:
        make_odd(dir / rw::trace_files::kEvents, layout >> 3 & 3);
        break;
    case 4:
        make_odd(files, layout >> 3 & 3);
        break;
    case 5:
        make_odd(files / "0123456789abcdef0123456789abcdef", layout >> 3 & 3);
        break;
    default:
        break;
    }
    try {
        rw::Trace trace(dir);
        rw::TraceSummary s = rw::summarize(trace);
        for (const auto& problem : rw::verify_file_copies(trace, s).problems)
            fail_if_quoted(problem.c_str());
        walk_like_replay(trace);
    } catch (const rw::FormatError& e) {
        fail_if_quoted(e.what());
    } catch (const rw::TraceDirError& e) {
        fail_if_quoted(e.what());
    }
    return 0;
}
