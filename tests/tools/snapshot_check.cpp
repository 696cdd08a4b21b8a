// Replays a trace to event N, snapshots the replayed world, replays to the
// end, restores the snapshot, and replays to the end again, several times.
// The program's output must be the same every time (it is echoed to
// stdout each time), and the snapshot's own copies must stay untouched.
//
//   snapshot_check TRACE_DIR EVENT [ROUNDS]
#include <cstdio>
#include <cstdlib>

#include "replayer.h"
#include "snapshot.h"
#include "trace.h"

using namespace rw;
using namespace rw::replay;

int main(int argc, char** argv)
{
    if (argc < 3) {
        std::fprintf(stderr, "usage: snapshot_check TRACE_DIR EVENT [ROUNDS]\n");
        return 2;
    }
    Trace trace(argv[1]);
    uint64_t at = std::strtoull(argv[2], nullptr, 10);
    int rounds = argc > 3 ? std::atoi(argv[3]) : 2;
    try {
        ReplayOptions options;
        options.echo_repeats = true;
        Replayer r(trace, options);
        while (r.next_event_index() < at && r.step()) {
        }
        if (!r.can_snapshot()) {
            while (!r.can_snapshot() && r.step()) {
            }
        }
        std::fprintf(stderr, "snapshot at event %llu\n", static_cast<unsigned long long>(r.next_event_index()));
        auto snap = r.take_snapshot();
        for (int i = 0; i < rounds; i++) {
            std::fflush(stdout);
            std::printf("--- round %d\n", i);
            std::fflush(stdout);
            while (r.step()) {
            }
            r.restore(*snap);
        }
    } catch (const ReplayError& e) {
        std::fprintf(stderr, "%s\n", e.report().c_str());
        return 1;
    }
    return 0;
}
