// System V shared memory in replay: the recording's segments stand as
// segments of the replay's own (sysv_segments.h), attached where the
// recording attached them; shmdt and munmap run for real, shmctl is
// answered from the trace.
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include <system_error>

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
    run_entered_call_as(t, e,
                        {{Registers::RDI, static_cast<uint64_t>(*real)},
                         {Registers::RSI, static_cast<uint64_t>(e.ret)},
                         {Registers::RDX, e.args[2] & ~uint64_t(SHM_RND)}});
}

} // namespace rw::replay
