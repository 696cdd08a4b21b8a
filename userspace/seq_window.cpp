#include "seq_window.h"

namespace rw {

void SeqWindow::emit(Event event)
{
    uint64_t seq = event_seq(event);
    const auto* sc = std::get_if<SyscallEvent>(&event);
    if (written_any_ && seq < written_up_to_ && !(sc && (sc->flags & kSyscallRebuilt)))
        late_++;
    held_.emplace(seq, std::move(event));
    while (held_.size() > kSeqWindow) {
        auto first = held_.begin();
        written_up_to_ = first->first;
        written_any_ = true;
        out_.emit(std::move(first->second));
        held_.erase(first);
    }
}

void SeqWindow::finish()
{
    for (auto& [seq, event] : held_)
        out_.emit(std::move(event));
    held_.clear();
}

} // namespace rw
