// A picture of an origin chain: a vertical timeline of the recording
// (events to scale, the latest at the bottom), one lane per thread, each
// hop a dot at its position labelled with its line and what it did.
#pragma once

#include <cstdint>
#include <string>

#include "value_origin.h"

namespace rw::cli {

std::string origin_svg(const std::string& expr, const OriginChain& chain, uint64_t total_events);

} // namespace rw::cli
