// System V shared memory in replay: the recording's segments stand as
// segments of the replay's own (sysv_segments.h), attached where the
// recording attached them; shmdt and munmap run for real, shmctl is
// answered from the trace.
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include <system_error>

#include "event_format.h"
#include "replay_limits.h"
#include "replayer.h"
#include "text.h"

namespace rw::replay {

void Replayer::note_segment_made(const SyscallEvent& e)
{
    if (!recorded_segments_.note(e))
        return; // found, not made: its shmat says why it cannot be replayed
    try {
        sysv_segments_.created(e.ret, e.args[1], static_cast<unsigned>(e.args[2]));
    } catch (const std::system_error& x) {
        refuse(e.tid, std::string("the replay cannot make a System V segment like the recording's: ") + x.what());
    }
}

void Replayer::attach_segment(Task& t, const SyscallEvent& e)
{
    if (auto why = recorded_segments_.attach_limit(e))
        refuse(e.tid, *why);
    auto real = sysv_segments_.real_id(static_cast<int64_t>(e.args[0]));
    if (!real)
        refuse(e.tid, "shmat of System V segment " + std::to_string(e.args[0]) + ": the replay has no segment for it");
    // The program's own registers come back after the call; the kernel
    // sees the replay's segment and the recorded address.
    Registers entry = t.regs();
    Registers r = entry;
    r[Registers::RDI] = static_cast<uint64_t>(*real);
    r[Registers::RSI] = static_cast<uint64_t>(e.ret);
    r[Registers::RDX] = e.args[2] & ~uint64_t(SHM_RND);
    t.set_regs(r);
    resume(t, Resume::Syscall);
    StopInfo s = wait_stop(t, "the return of shmat()");
    if (s.kind != StopInfo::Kind::SyscallStop)
        diverge(t, "shmat did not return: " + describe_stop(t, s));
    uint64_t got = t.regs()[Registers::RAX];
    if (got != static_cast<uint64_t>(e.ret))
        diverge(t, "shmat returned " + format_return(SYS_shmat, static_cast<int64_t>(got)) + " in the replay, " +
                       hex(static_cast<uint64_t>(e.ret)) + " in the recording");
    entry[Registers::RAX] = got;
    t.set_regs(entry);
    t.at = Task::At::SyscallExit;
}

} // namespace rw::replay
