// Serving recorded syscalls through seccomp user notifications.
//
// A ptrace stop per emulated syscall (PTRACE_SYSEMU, then the registers
// read and written) costs about twice what a seccomp user notification
// does: the thread blocks in the kernel, the replayer reads the call from
// the listener, writes the recorded memory and answers the result. The
// filter sends every syscall replay serves from the log to the listener and
// lets through only those replay runs for real (memory maps, clone, exec,
// exit, signal state) so that a thread running under PTRACE_CONT can make
// no call with effects outside the replay unseen. The filter is installed
// once in the replayed program and inherited by its threads, children and
// snapshot copies. A notified call replay does not serve runs only if it
// is rewind's own (an injected call) or a throwaway copy's; one of the
// replayed program is refused and reported.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "unique_fd.h"

struct sock_filter;

namespace rw::replay {

struct SyscallNotification {
    uint64_t id = 0;
    pid_t tid = 0;
    bool native = true; // x86-64 calling convention
    int nr = -1;
    std::array<uint64_t, 6> args{};
};

class SyscallNotifier {
public:
    // The filter program: served syscalls notify, the others pass.
    static std::vector<struct sock_filter> filter_program(uint32_t cookie);
    // Whether the filter sends this call to the listener.
    static bool notifies(int nr, const std::array<uint64_t, 6>& args);

    SyscallNotifier(UniqueFd listener, uint32_t cookie);
    int fd() const { return listener_.get(); }
    uint32_t cookie() const { return cookie_; }

    // The next notification (blocks until one comes); nullopt if the
    // thread that made it is gone or was interrupted meanwhile, or, with
    // `interruptible`, if a signal handler ran in this thread first.
    std::optional<SyscallNotification> receive(bool interruptible = false);
    // The call ends with `result` (a value, or -errno), not run.
    // False if the thread no longer waits for it (a signal interrupted it).
    bool answer(uint64_t id, int64_t result);
    // The call runs for real.
    void let_run(uint64_t id);
    // The call fails with ENOSYS, not run.
    void refuse(uint64_t id) { answer(id, -ENOSYS); }

    // Which threads' unclaimed calls may run: rewind's own calls, throwaway
    // copies', not the replayed program's own, which replay never runs
    // unseen. One that came is kept here for the replayer to report.
    std::function<bool(pid_t)> may_run;
    std::optional<std::string> refused;

    // Whether `tid` (stopped under ptrace) runs under this very filter,
    // the most recent one it has: a thread restored from a landmark image
    // or made by another replay does not.
    bool filters(pid_t tid) const;

    // Threads whose notifications the replayer answers itself; the others'
    // are let through as they come.
    void claim(pid_t tid) { claimed_ = tid; }
    void release() { claimed_ = 0; }
    pid_t claimed() const { return claimed_; }

private:
    UniqueFd listener_;
    uint32_t cookie_;
    pid_t claimed_ = 0;
};

} // namespace rw::replay
