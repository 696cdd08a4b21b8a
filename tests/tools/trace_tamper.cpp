// Rewrites a trace's event stream with one recorded read() made shorter:
// the return value and the captured bytes shrink together and every chunk
// is re-checksummed, so the trace is consistent but no longer true. Replay
// must report a divergence, not succeed or hang.
//
//   trace_tamper TRACE_DIR [MIN_BYTES]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sys/syscall.h>

#include "event_stream.h"

using namespace rw;

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: trace_tamper TRACE_DIR [MIN_BYTES]\n");
        return 2;
    }
    std::filesystem::path dir = argv[1];
    int64_t min_bytes = argc > 2 ? std::atoll(argv[2]) : 2;
    auto events = dir / "events";
    auto tampered = dir / "events.tampered";
    std::filesystem::remove(tampered);
    bool done = false;
    {
        EventStreamReader in(events);
        EventStreamWriter out(tampered);
        Event e;
        while (in.next(e)) {
            auto* sc = std::get_if<SyscallEvent>(&e);
            // The last byte of the first big enough read of this program's own data.
            if (!done && sc && sc->nr == SYS_read && sc->ret >= min_bytes && !sc->memory.empty() &&
                sc->memory[0].bytes.size() == static_cast<size_t>(sc->ret)) {
                sc->ret -= 1;
                sc->memory[0].bytes.pop_back();
                sc->memory[0].length -= 1;
                done = true;
                std::printf("shortened read #%llu to %lld bytes\n",
                            static_cast<unsigned long long>(in.next_index() - 1), static_cast<long long>(sc->ret));
            }
            out.append(e);
        }
        if (in.end().kind != StreamEnd::Kind::Clean) {
            std::fprintf(stderr, "trace_tamper: %s\n", describe(in.end()).c_str());
            return 1;
        }
    }
    if (!done) {
        std::fprintf(stderr, "trace_tamper: no read() of at least %lld bytes\n", static_cast<long long>(min_bytes));
        return 1;
    }
    std::filesystem::rename(tampered, events);
    return 0;
}
