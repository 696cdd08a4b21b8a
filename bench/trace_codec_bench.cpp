// Throughput of the trace format: event encoding, decoding, and the full
// stream path (encode + zstd + checksum, and back).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "event_codec.h"
#include "event_stream.h"

using namespace rw;

namespace {

// A typical mix: small syscalls, a 4 KiB read, an occasional signal.
std::vector<Event> typical_events(size_t n)
{
    std::vector<Event> out;
    for (size_t i = 0; i < n; i++) {
        SyscallEvent e;
        e.seq = i;
        e.tid = 1000;
        e.tgid = 1000;
        e.nr = i % 3 == 0 ? 0 : 39;
        e.args = {3, 0x7ffff7fb0000 + i, 4096, 0, 0, 0};
        e.ret = e.nr == 0 ? 4096 : 1000;
        e.ip = 0x7ffff7ea0000 + (i % 7);
        e.sp = 0x7fffffffe000;
        if (e.nr == 0) {
            MemoryRange r;
            r.addr = e.args[1];
            r.bytes.resize(4096);
            for (size_t j = 0; j < r.bytes.size(); j++)
                r.bytes[j] = static_cast<uint8_t>((j * 7 + i) & 0x3f);
            r.length = r.bytes.size();
            r.hash = i;
            e.memory.push_back(std::move(r));
        }
        out.push_back(std::move(e));
    }
    return out;
}

size_t encoded_size(const std::vector<Event>& events)
{
    std::vector<uint8_t> buf;
    for (const auto& e : events)
        encode_event(e, buf);
    return buf.size();
}

void BM_Encode(benchmark::State& state)
{
    auto events = typical_events(3000);
    std::vector<uint8_t> buf;
    for (auto _ : state) {
        buf.clear();
        for (const auto& e : events)
            encode_event(e, buf);
        benchmark::DoNotOptimize(buf.data());
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events.size()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_Encode);

void BM_Decode(benchmark::State& state)
{
    auto events = typical_events(3000);
    std::vector<uint8_t> buf;
    for (const auto& e : events)
        encode_event(e, buf);
    for (auto _ : state) {
        ByteReader r(buf);
        while (!r.done())
            benchmark::DoNotOptimize(decode_event(r));
    }
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events.size()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buf.size()));
}
BENCHMARK(BM_Decode);

void BM_StreamWriteRead(benchmark::State& state)
{
    auto events = typical_events(3000);
    size_t raw = encoded_size(events);
    auto path = std::filesystem::temp_directory_path() / ("rewind-bench-" + std::to_string(getpid()));
    for (auto _ : state) {
        std::filesystem::remove(path);
        {
            EventStreamWriter w(path, static_cast<int>(state.range(0)));
            for (const auto& e : events)
                w.append(e);
        }
        EventStreamReader r(path);
        Event e;
        while (r.next(e))
            benchmark::DoNotOptimize(e);
    }
    state.counters["compressed_ratio"] =
        static_cast<double>(std::filesystem::file_size(path)) / static_cast<double>(raw);
    std::filesystem::remove(path);
    state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * events.size()));
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * raw));
}
BENCHMARK(BM_StreamWriteRead)->Arg(1)->Arg(3);

} // namespace

BENCHMARK_MAIN();
