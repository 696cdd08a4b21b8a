// The tracer thread traps rdtsc as its tracees do.
//
// Why: on x86 the kernel writes CR4.TSD whenever it switches between a
// thread that traps rdtsc (PR_SET_TSC, set in every recorded or replayed
// program) and one that does not. Under a hypervisor that write exits to
// the host. A ptrace stop is two such switches, tracee to tracer and back:
// on a KVM guest an emulated syscall took 28 to 33 µs with a plain tracer
// and 15 µs with a tracer that traps rdtsc too (same CPU, side by side),
// and a single step 43 µs against 30.
//
// The thread's own rdtsc/rdtscp still work: a SIGSEGV handler runs them
// with the trap lifted for that one instruction (slow, so clocks on hot
// paths use steady_now.h, which does not read the TSC in user mode).
// Children forked afterwards get a normal TSC back (pthread_atfork); those
// started otherwise (posix_spawn, a raw clone) need PlainTscForChildren.
#pragma once

#include <cstdint>

namespace rw {

// While in scope, rdtsc traps in the calling thread, with the handler
// above installed. Nothing changes where PR_SET_TSC is refused.
class OwnRdtscTrap {
public:
    OwnRdtscTrap();
    ~OwnRdtscTrap();
    OwnRdtscTrap(const OwnRdtscTrap&) = delete;
    OwnRdtscTrap& operator=(const OwnRdtscTrap&) = delete;
    bool active() const { return active_; }

private:
    bool set_here_ = false;
    bool active_ = false;
};

// How many of this process's rdtsc/rdtscp the handler has run: a count
// that grows with the events replayed means a clock read on a hot path.
uint64_t own_rdtsc_emulated();

// While in scope, the calling thread reads the TSC normally, so a child it
// starts without fork() (which would run the atfork handler) does too.
class PlainTscForChildren {
public:
    PlainTscForChildren();
    ~PlainTscForChildren();
    PlainTscForChildren(const PlainTscForChildren&) = delete;
    PlainTscForChildren& operator=(const PlainTscForChildren&) = delete;

private:
    bool was_trapped_ = false;
};

} // namespace rw
