// libFuzzer target: one chunk's payload of a trace, as the reader hands it
// to the decoder after its checksums passed (a crafted trace passes them:
// they guard against accidents, not against intent). Whatever the bytes,
// decoding and every reader of the decoded events (dump's text and JSON,
// info's checks, replay's limits and its descriptor tracking) must refuse
// cleanly, never crash.
#include <cstddef>
#include <cstdint>
#include <span>

#include <nlohmann/json.hpp>

#include "bytes.h"
#include "event_codec.h"
#include "event_format.h"
#include "json_bytes.h"
#include "replay_limits.h"
#include "stdio_fds.h"
#include "trace_summary.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    rw::ByteReader in(std::span<const uint8_t>(data, size));
    uint64_t index = 0;
    rw::replay::StdioFds fds = rw::replay::StdioFds::inherited();
    try {
        while (!in.done()) {
            rw::Event e = rw::decode_event(in);
            rw::FormatOptions options;
            (void)rw::format_event(index, e, options);
            (void)rw::dump_for_display(rw::event_to_json(index, e, options));
            (void)rw::replay_limit(e);
            if (const auto* s = std::get_if<rw::SyscallEvent>(&e)) {
                (void)rw::describe_unknown(*s);
                (void)rw::format_syscall_call(*s);
                fds.apply(*s);
                (void)fds.stream_of(s->args[0]);
            }
            index++;
        }
    } catch (const rw::FormatError&) {
        // A clean refusal.
    }
    return 0;
}
