#include "sysv_segments.h"

#include <sys/ipc.h>
#include <sys/shm.h>

#include <cerrno>
#include <system_error>

namespace rw::replay {

SysvSegments::~SysvSegments()
{
    for (void* at : attached_)
        ::shmdt(at);
}

void SysvSegments::created(int64_t recorded_id, size_t size, unsigned mode)
{
    int id = ::shmget(IPC_PRIVATE, size, IPC_CREAT | (mode & 0777));
    if (id < 0)
        throw std::system_error(errno, std::generic_category(),
                                "shmget of " + std::to_string(size) + " bytes for segment " +
                                    std::to_string(recorded_id));
    // Read-only and never touched: it costs rewind no memory.
    void* at = ::shmat(id, nullptr, SHM_RDONLY);
    int err = errno;
    ::shmctl(id, IPC_RMID, nullptr);
    if (at == reinterpret_cast<void*>(-1))
        throw std::system_error(err, std::generic_category(), "shmat of segment " + std::to_string(id));
    attached_.push_back(at);
    ids_[recorded_id] = id;
}

std::optional<int> SysvSegments::real_id(int64_t recorded_id) const
{
    auto it = ids_.find(recorded_id);
    if (it == ids_.end())
        return std::nullopt;
    return it->second;
}

} // namespace rw::replay
