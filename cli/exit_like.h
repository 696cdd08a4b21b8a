// Ends rewind the way a recorded program ended, so callers see its status.
#pragma once

#include "trace_meta.h"

namespace rw::cli {

[[noreturn]] void exit_like(const ExitStatus& status);

} // namespace rw::cli
