#include "replay_error.h"

namespace rw::replay {

int exit_status_for(ReplayErrorKind kind)
{
    switch (kind) {
    case ReplayErrorKind::Divergence:
        return 90;
    case ReplayErrorKind::Refused:
        return 91;
    case ReplayErrorKind::TraceEnded:
        return 92;
    case ReplayErrorKind::Stuck:
        return 93;
    case ReplayErrorKind::Damaged:
        return 92;
    }
    return 90;
}

namespace {

std::string headline(ReplayErrorKind kind)
{
    switch (kind) {
    case ReplayErrorKind::Divergence:
        return "replay diverged from the recording";
    case ReplayErrorKind::Refused:
        return "replay cannot reproduce this recording";
    case ReplayErrorKind::TraceEnded:
        return "the recording ends early";
    case ReplayErrorKind::Stuck:
        return "replay is stuck";
    case ReplayErrorKind::Damaged:
        return "the trace is damaged";
    }
    return "replay failed";
}

} // namespace

ReplayError::ReplayError(ReplayErrorKind kind, uint64_t event_index, Tid tid, std::string what, std::string details)
    : std::runtime_error(what), kind_(kind), event_index_(event_index), tid_(tid), what_(std::move(what)),
      details_(std::move(details))
{}

std::string ReplayError::report() const
{
    std::string r = headline(kind_) + " at event #" + std::to_string(event_index_);
    if (tid_)
        r += " (thread " + std::to_string(tid_) + " of the recording)";
    r += ":\n  " + what_;
    if (!details_.empty())
        r += "\n" + details_;
    return r;
}

} // namespace rw::replay
