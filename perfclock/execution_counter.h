// Counting executions of an instruction by the thread a position follows.
// Where the CPU's debug registers work, a perf breakpoint counts in the
// kernel and stops the thread only at the N-th execution. Where they do not
// (some hypervisors accept the perf event and never let it fire), an int3
// stands in: every execution is a ptrace stop, the int3 is counted, taken
// out for the instruction to run, and put back after it. Same counts, same
// stops, at the price of a trap per execution: the searches that use these
// counters keep them to short stretches or rarely executed instructions.
//
// A soft counter's stop reaches the session as a perf trap would: the
// siginfo claim() returns carries si_code TRAP_PERF and the counter's tag,
// with the thread at the instruction, not after its int3.
#pragma once

#include <sys/types.h>

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "event.h"
#include "hw_breakpoint.h"
#include "instruction_trap.h"

namespace rw::perfclock {

// The thread an int3 counter's trap stopped, as its owner keeps it: the
// owner may cache its registers for the stop, so the counters read and
// write them through it.
class TrappedThread {
public:
    virtual ~TrappedThread() = default;
    virtual pid_t tid() const = 0;
    // Every resume of the thread is a single step (a debugger counts instructions).
    virtual bool single_stepping() const = 0;
    virtual Registers regs() = 0;
    virtual void set_regs(const Registers& regs) = 0;
};

// How a thread goes on after a trap the counters handled.
enum class AfterTrap { Resume, Step };

class SoftCounters {
public:
    struct Counter {
        uint64_t addr = 0;
        uint64_t stop_after = 0; // stop at every stop_after-th execution (0: count only)
        uint64_t tag = 0;
        uint64_t count = 0;
    };

    // Plants (or shares) the int3 at `addr` in `task`'s process. Throws
    // std::runtime_error if the code cannot be read or written, or another
    // int3 (the engine's, the debugger's) is there.
    std::shared_ptr<Counter> add(pid_t tid, uint64_t addr, uint64_t stop_after, uint64_t tag);
    void remove(const std::shared_ptr<Counter>& counter);

    struct Claim {
        enum class Kind {
            NotOurs, // the owner handles the trap as it is
            Fired,   // a counter's stop: `info` is the perf trap it stands for
            Handled, // an execution counted or a step over finished: go on with `then`
        };
        Kind kind = Kind::NotOurs;
        siginfo_t info{};
        AfterTrap then = AfterTrap::Resume;
    };
    // First look at every SIGTRAP of the owner's threads.
    Claim claim(TrappedThread& thread, const siginfo_t& info);
    // After the owner handled a Fired trap: whether the thread must make
    // one single step (its instruction runs once with the int3 out) where
    // the owner would resume it (`owner_steps` false) or step it anyway.
    bool step_after_fired(TrappedThread& thread, bool owner_steps);

    // Around a fork of the process (a snapshot copies its memory).
    void lift_all();
    void plant_all();
    bool empty() const { return sites_.empty(); }
    // The byte under this set's int3 at `addr`, if it has one planted there.
    std::optional<uint8_t> original_at(uint64_t addr) const
    {
        auto it = sites_.find(addr);
        if (it == sites_.end() || !it->second.trap->planted())
            return std::nullopt;
        return it->second.trap->original();
    }
    // The replay engine's int3s (parallel traces): a counter's int3 shares one.
    void set_foreign_int3(ByteUnderInt3 f) { foreign_ = std::move(f); }

private:
    ByteUnderInt3 foreign_;
    struct Site {
        std::unique_ptr<InstructionTrap> trap;
        std::vector<std::shared_ptr<Counter>> counters;
    };
    std::map<uint64_t, Site> sites_;
    uint64_t lifted_ = 0; // a site taken out for its instruction to run once
    pid_t lifted_tid_ = 0;
    bool swallow_step_ = false; // that step is ours alone, not a step the session asked for
    void replant();
};

// A counter as the session uses it, whichever kind the machine allows.
class ExecutionCounter {
public:
    // With `stop_after` > 0 the thread stops at that execution (and every
    // stop_after-th after it): a perf trap tagged `tag`, real or stood for.
    ExecutionCounter(SoftCounters& soft, pid_t tid, uint64_t addr, uint64_t stop_after, uint64_t tag);
    ~ExecutionCounter();
    ExecutionCounter(const ExecutionCounter&) = delete;
    ExecutionCounter& operator=(const ExecutionCounter&) = delete;
    ExecutionCounter(ExecutionCounter&& other) noexcept;

    uint64_t count() const;
    uint64_t address() const { return addr_; }
    bool by_debug_register() const { return hardware_.has_value(); }
    const BreakpointCounter* hardware() const { return hardware_ ? &*hardware_ : nullptr; }

private:
    uint64_t addr_;
    std::optional<BreakpointCounter> hardware_;
    SoftCounters* soft_ = nullptr;
    std::shared_ptr<SoftCounters::Counter> counter_;
};

} // namespace rw::perfclock
