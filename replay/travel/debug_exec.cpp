// The debugged process runs a new program (execve): gdb must load its
// symbols and set its breakpoints again, and reverse execution must not
// wander back into the former program, whose addresses mean nothing to the
// new one. The session's history therefore begins again after each exec of
// the debugged process, the way gdb itself treats an exec (`follow-exec-mode
// same`): the former program's breakpoints and checkpoints are dropped.
#include <sys/syscall.h>

#include "debug_session.h"

namespace rw::replay {

std::optional<StopReport> DebugSession::enter_new_program(const ExecEvent& exec)
{
    // The execve's return follows: after it, the next instruction is the new
    // program's first (unless a seek was sent to the event in between).
    if (const IndexedEvent* next = engine_.peek_next_event()) {
        const auto* call = std::get_if<SyscallEvent>(&next->event);
        bool execve_return = call && call->tid == exec.tid && (call->nr == SYS_execve || call->nr == SYS_execveat);
        bool wanted_between = mode_ != Mode::Forward && target_.event <= engine_.next_event_index();
        if (execve_return && !wanted_between && engine_.step())
            position_ = perfclock::Position{engine_.next_event_index(), {}};
    }
    // The kernel dropped the former image with every int3 in it; gdb sets
    // its breakpoints again once it has read the new program.
    breakpoints_.forget_all();
    hit_counts_.clear();
    resting_on_ = 0;
    step_pending_ = false;
    program_ = exec;
    current_tid_ = exec.tid;
    begin_ = position_;
    history_begins_late_ = true;
    std::vector<uint64_t> stale;
    for (const auto* e : timeline_.checkpoints())
        if (e->pos.event < begin_.event)
            stale.push_back(e->id);
    for (uint64_t id : stale)
        timeline_.remove_checkpoint(id);
    // Reverse execution starts its searches from here.
    if (!timeline_.has_at(begin_) && engine_.can_snapshot())
        timeline_.add(Timeline::Kind::Beginning, begin_, engine_.take_snapshot());
    debug_log("exec of %s: history begins again at %s", exec.executable.c_str(), begin_.describe().c_str());
    exec_unreported_ = true;
    if (mode_ != Mode::Forward)
        return std::nullopt;
    return stop(StopReport::Kind::Exec);
}

} // namespace rw::replay
