// Snapshot latency of the replayed world: taking one (a fork of every
// replayed process, injected into it) and restoring one (a fork of the
// stopped copy, and the current world killed). The trace comes from
// REWIND_BENCH_TRACE (bench/compare.py records bigmem for it); replay stops
// at its middle event.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <memory>

#include "replayer.h"
#include "snapshot.h"
#include "trace.h"

using namespace rw;

namespace {

struct World {
    Trace trace;
    replay::Replayer replayer;
    explicit World(const char* dir) : trace(dir), replayer(trace, quiet())
    {
        uint64_t middle = trace.end() ? trace.end()->events / 2 : 40;
        while (replayer.next_event_index() < middle && replayer.step()) {
        }
        while (!replayer.can_snapshot() && replayer.step()) {
        }
    }
    static replay::ReplayOptions quiet()
    {
        replay::ReplayOptions o;
        o.echo_output = false;
        return o;
    }
};

World& world()
{
    static World w(std::getenv("REWIND_BENCH_TRACE"));
    return w;
}

void BM_TakeSnapshot(benchmark::State& state)
{
    World& w = world();
    for (auto _ : state) {
        auto snap = w.replayer.take_snapshot();
        state.PauseTiming();
        snap.reset(); // killing the copies is not part of taking one
        state.ResumeTiming();
    }
}
BENCHMARK(BM_TakeSnapshot)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_RestoreSnapshot(benchmark::State& state)
{
    World& w = world();
    auto snap = w.replayer.take_snapshot();
    for (auto _ : state)
        w.replayer.restore(*snap);
}
BENCHMARK(BM_RestoreSnapshot)->Unit(benchmark::kMicrosecond)->UseRealTime();

} // namespace

int main(int argc, char** argv)
{
    if (!std::getenv("REWIND_BENCH_TRACE")) {
        std::fprintf(stderr, "snapshot_bench: set REWIND_BENCH_TRACE to a recording (of bench_bigmem)\n");
        return 2;
    }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
