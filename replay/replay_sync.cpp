// Synchronization events of traces recorded with --parallel.
#include "replayer.h"

#include "sync_calls.h"

namespace rw::replay {

void Replayer::on_sync(const SyncEvent& e)
{
    refuse(e.tid, "replaying a trace recorded with --parallel (a " + std::string(sync_call_name(e.fn)) + " event)",
           "this version records such traces but does not replay them yet");
}

} // namespace rw::replay
