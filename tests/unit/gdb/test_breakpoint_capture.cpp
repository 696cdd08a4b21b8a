// Which memory gdb watches for an expression, learnt without the replay
// seeing gdb's insertions.
#include <doctest/doctest.h>

#include "breakpoint_capture.h"

using namespace rw::replay;
using Packet = BreakpointCapture::Packet;

TEST_CASE("breakpoint capture: gdb's watchpoints held back, and their removal answered")
{
    BreakpointCapture capture;
    Packet linker{0, 0x7ffff7fcc060, 1}, watched{2, 0x555555558038, 8}, access{4, 0x555555558040, 4};
    // Not capturing: everything is the replay's.
    CHECK_FALSE(capture.take(watched, true));
    CHECK_FALSE(capture.take(watched, false));

    capture.start();
    CHECK(capture.take(linker, true));
    CHECK(capture.take(watched, true));
    CHECK(capture.take(access, true));
    CHECK(capture.take(access, false)); // deleted before the capture ends
    auto ranges = capture.finish();
    REQUIRE(ranges.size() == 1); // watchpoints only, not gdb's own breakpoint
    CHECK(ranges[0] == watched);

    // After it: removing what was held is answered here, once; anything
    // else is the replay's again.
    CHECK(capture.take(watched, false));
    CHECK_FALSE(capture.take(watched, false));
    CHECK(capture.take(linker, false));
    CHECK_FALSE(capture.take(Packet{0, 0x1000, 1}, true));
    CHECK_FALSE(capture.take(access, false));
}
