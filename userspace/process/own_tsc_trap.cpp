// The tracer thread traps rdtsc as its tracees do: see own_tsc_trap.h.
#include "own_tsc_trap.h"

#include <pthread.h>
#include <sys/prctl.h>
#include <ucontext.h>
#include <x86intrin.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <mutex>

namespace rw {
namespace {

struct sigaction previous_segv;
std::atomic<uint64_t> emulated{0};

bool thread_traps_rdtsc()
{
    int mode = 0;
    return prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode == PR_TSC_SIGSEGV;
}

// Only async-signal-safe calls: it runs in the middle of any code.
void on_segv(int sig, siginfo_t* info, void* context)
{
    auto* uc = static_cast<ucontext_t*>(context);
    greg_t* regs = uc->uc_mcontext.gregs;
    // The trap raises a general protection fault: si_code SI_KERNEL. Any
    // other fault is not ours, and the instruction at RIP may be unreadable.
    if (info->si_code == SI_KERNEL) {
        const auto* code = reinterpret_cast<const uint8_t*>(regs[REG_RIP]);
        bool rdtsc = code[0] == 0x0f && code[1] == 0x31;
        bool rdtscp = code[0] == 0x0f && code[1] == 0x01 && code[2] == 0xf9;
        if (rdtsc || rdtscp) {
            prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
            unsigned aux = 0;
            uint64_t tsc = __rdtscp(&aux);
            prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
            regs[REG_RAX] = static_cast<greg_t>(tsc & 0xffffffffu);
            regs[REG_RDX] = static_cast<greg_t>(tsc >> 32);
            if (rdtscp)
                regs[REG_RCX] = static_cast<greg_t>(aux);
            regs[REG_RIP] += rdtscp ? 3 : 2;
            emulated.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    // Not a trapped rdtsc: what would have happened without this handler.
    if (previous_segv.sa_flags & SA_SIGINFO) {
        previous_segv.sa_sigaction(sig, info, context);
        return;
    }
    if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN) {
        previous_segv.sa_handler(sig);
        return;
    }
    // The faulting instruction runs again and meets the default action.
    signal(SIGSEGV, SIG_DFL);
}

void plain_tsc_in_child()
{
    prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

} // namespace

OwnRdtscTrap::OwnRdtscTrap()
{
    static std::once_flag installed;
    std::call_once(installed, [] {
        struct sigaction action {};
        action.sa_sigaction = on_segv;
        action.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&action.sa_mask);
        sigaction(SIGSEGV, &action, &previous_segv);
        pthread_atfork(nullptr, nullptr, plain_tsc_in_child);
    });
    active_ = thread_traps_rdtsc();
    if (!active_)
        set_here_ = active_ = prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0) == 0;
}

OwnRdtscTrap::~OwnRdtscTrap()
{
    if (set_here_)
        prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

uint64_t own_rdtsc_emulated()
{
    return emulated.load(std::memory_order_relaxed);
}

PlainTscForChildren::PlainTscForChildren() : was_trapped_(thread_traps_rdtsc())
{
    if (was_trapped_)
        prctl(PR_SET_TSC, PR_TSC_ENABLE, 0, 0, 0);
}

PlainTscForChildren::~PlainTscForChildren()
{
    if (was_trapped_)
        prctl(PR_SET_TSC, PR_TSC_SIGSEGV, 0, 0, 0);
}

} // namespace rw
