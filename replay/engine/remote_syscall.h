// Runs syscalls of rewind's choosing inside a tracee stopped at a syscall
// entry, then puts it back as if its own syscall had returned a given
// value (RAII: the registers and any scratch memory are restored).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "event.h"
#include "tracee.h"

namespace rw::replay {

// Scratch memory the replayer writes into a tracee (an injected call's
// arguments) lives this far below its stack pointer: clear of the red zone
// and of anything the interrupted code could still be using.
inline constexpr uint64_t kScratchBelowStack = 16384;

class StopWaiter;
class Task;

class RemoteSyscalls {
public:
    // A stop the caller made itself (its interrupt): it takes note, and
    // the injected call goes on.
    using OwnStop = std::function<bool(const StopInfo&)>;
    // `task` must be stopped at a syscall entry.
    RemoteSyscalls(Task& task, StopWaiter& waiter, OwnStop own_stop = {});
    ~RemoteSyscalls();
    RemoteSyscalls(const RemoteSyscalls&) = delete;
    RemoteSyscalls& operator=(const RemoteSyscalls&) = delete;

    // The raw return value (-errno on failure).
    int64_t call(long nr, uint64_t a0 = 0, uint64_t a1 = 0, uint64_t a2 = 0, uint64_t a3 = 0, uint64_t a4 = 0,
                 uint64_t a5 = 0);
    // Copies a string into scratch memory of the tracee; returns its address.
    uint64_t push_string(const std::string& s);
    // Leaves the task stopped after its original syscall with this result.
    void finish(int64_t result);
    // Leaves the task stopped at the entry of its original syscall again,
    // with its own registers and memory, for the call to run for real now
    // that the injected ones prepared it.
    void enter_original();

private:
    int64_t call_once(long nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5);
    void wait_syscall_stop(const char* what);
    Task& task_;
    StopWaiter& waiter_;
    OwnStop own_stop_;
    Registers saved_;
    bool first_ = true;
    bool finished_ = false;
    uint64_t scratch_ = 0;
    std::vector<uint8_t> scratch_saved_;
    size_t scratch_used_ = 0;
};

} // namespace rw::replay
