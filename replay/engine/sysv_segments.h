// The replay's own System V shared memory segments, one for each segment
// the recording created. A replayed shmat attaches the replay's segment
// where the recording's was attached, so that processes that shared it in
// the recording share it again (their writes reach each other as they did).
//
// Each segment is removed (IPC_RMID) as soon as it is made, kept alive by
// an attachment of rewind's own: it is gone when the replay ends, however
// it ends, and no other process can look it up by a key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rw::replay {

class SysvSegments {
public:
    SysvSegments() = default;
    SysvSegments(const SysvSegments&) = delete;
    SysvSegments& operator=(const SysvSegments&) = delete;
    ~SysvSegments();

    // The recording's shmget made segment `recorded_id` of `size` bytes and
    // permissions `mode`: a fresh one stands for it from now on (a replay
    // that goes back before that call and makes it again starts from zeros,
    // as the program did). Throws std::system_error if none can be made.
    void created(int64_t recorded_id, size_t size, unsigned mode);
    // The replay's segment for the recording's, if the recording made it.
    std::optional<int> real_id(int64_t recorded_id) const;
    // Which segment stands for which, as a snapshot keeps it: a replay that
    // went back before a shmget and made it again has a new segment, while
    // a later snapshot's processes still attach the one before.
    const std::map<int64_t, int>& ids() const { return ids_; }
    void restore_ids(std::map<int64_t, int> ids) { ids_ = std::move(ids); }
    bool empty() const { return ids_.empty(); }

private:
    std::map<int64_t, int> ids_;  // recorded id -> the replay's segment
    std::vector<void*> attached_; // rewind's own attachments, one per segment made
};

} // namespace rw::replay
