#include "debug_log.h"

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "steady_now.h"

namespace rw {

void debug_log(const char* format, ...)
{
    static const bool enabled = std::getenv("REWIND_DEBUG") != nullptr;
    if (!enabled)
        return;
    static const auto start = steady_now();
    double t = std::chrono::duration<double>(steady_now() - start).count();
    std::fprintf(stderr, "[rewind %8.3f] ", t);
    va_list args;
    va_start(args, format);
    std::vfprintf(stderr, format, args);
    va_end(args);
    std::fputc('\n', stderr);
}

} // namespace rw
