// Snapshots that live outside a debugging session (a trace's persistent
// landmarks), brought into its timeline when a move in time needs a start
// later than any snapshot the session has. The session knows nothing of
// how they are kept or restored.
#pragma once

#include <string>

#include "position.h"
#include "timeline.h"

namespace rw::replay {

class Replayer;

class SnapshotSource {
public:
    virtual ~SnapshotSource() = default;
    // The latest snapshot at or before `target` and strictly after `after`
    // (the best start the caller has already), added to `timeline`;
    // nullptr when there is none that loads.
    virtual const Timeline::Entry* bring_in(const perfclock::Position& target, const perfclock::Position& after,
                                            Timeline& timeline, Replayer& replayer) = 0;
    // Restoring the replay from an entry this source brought in failed: it
    // is not used again.
    virtual void failed(const Timeline::Entry& entry, const std::string& why) = 0;
    // Whether a timeline entry is one this source brought in.
    virtual bool owns(const Timeline::Entry& entry) const = 0;
    // The start of a trace recorded by attaching to a running process (its
    // start image), added to `timeline` as its beginning. Throws
    // std::runtime_error saying why it cannot be loaded.
    virtual const Timeline::Entry& beginning(Timeline& timeline, Replayer& replayer) = 0;
};

} // namespace rw::replay
