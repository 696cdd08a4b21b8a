#include "signal_state.h"

#include <cerrno>
#include <csignal>

namespace rw {
namespace {

constexpr int kLastSignal = 64;

SignalState remembered;
bool have_remembered = false;

bool settable(int sig)
{
    // SIGKILL and SIGSTOP cannot be caught, blocked or ignored; 32 and 33 are
    // glibc's own (thread cancellation, setxid) and rejected by sigaction.
    return sig != SIGKILL && sig != SIGSTOP && sig != 32 && sig != 33;
}

} // namespace

SignalState SignalState::current()
{
    SignalState s;
    sigset_t mask;
    sigemptyset(&mask);
    sigprocmask(SIG_BLOCK, nullptr, &mask);
    for (int sig = 1; sig <= kLastSignal; sig++) {
        uint64_t bit = uint64_t(1) << (sig - 1);
        if (sigismember(&mask, sig) == 1)
            s.blocked |= bit;
        struct sigaction action {};
        if (settable(sig) && sigaction(sig, nullptr, &action) == 0 && action.sa_handler == SIG_IGN)
            s.ignored |= bit;
    }
    return s;
}

SignalState SignalState::initial()
{
    return have_remembered ? remembered : current();
}

int SignalState::apply() const
{
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig = 1; sig <= kLastSignal; sig++) {
        if (!settable(sig))
            continue;
        uint64_t bit = uint64_t(1) << (sig - 1);
        if (blocked & bit)
            sigaddset(&mask, sig);
        struct sigaction action {};
        action.sa_handler = (ignored & bit) ? SIG_IGN : SIG_DFL;
        sigemptyset(&action.sa_mask);
        if (sigaction(sig, &action, nullptr) != 0)
            return errno;
    }
    if (sigprocmask(SIG_SETMASK, &mask, nullptr) != 0)
        return errno;
    return 0;
}

void remember_initial_signal_state()
{
    remembered = SignalState::current();
    have_remembered = true;
}

} // namespace rw
