#include "exit_like.h"

#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

namespace rw::cli {

void exit_like(const ExitStatus& status)
{
    std::fflush(stdout);
    std::fflush(stderr);
    if (!status.signaled)
        std::exit(status.code);
    // Die of the same signal, without a core dump of rewind itself.
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(status.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, status.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(status.signal);
    std::exit(128 + status.signal);
}

} // namespace rw::cli
