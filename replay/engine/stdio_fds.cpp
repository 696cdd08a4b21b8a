#include "stdio_fds.h"

#include <sys/syscall.h>

#include <cstring>

#include "syscall_table.h"

namespace rw::replay {

StdioFds StdioFds::inherited()
{
    StdioFds f;
    f.streams_ = {{0, 0}, {1, 1}, {2, 2}};
    return f;
}

int StdioFds::stream_of(uint64_t fd) const
{
    auto it = streams_.find(static_cast<int>(fd));
    return it == streams_.end() ? -1 : it->second;
}

void StdioFds::apply(const SyscallEvent& e)
{
    if (e.ret < 0)
        return;
    uint64_t args[RW_MAX_ARGS];
    std::copy(e.args.begin(), e.args.end(), args);
    auto fd = [](uint64_t v) { return static_cast<int>(v); };
    FdEffect effect = fd_effect(e.nr, args);
    // A descriptor number that comes to mean something else is no pidfd.
    if (effect == FdEffect::NewFd || effect == FdEffect::Dup)
        pidfds_.erase(fd(e.ret));
    else if (effect == FdEffect::Dup2)
        pidfds_.erase(fd(e.args[1]));
    else if (effect == FdEffect::Close)
        pidfds_.erase(fd(e.args[0]));
    else if (effect == FdEffect::CloseRange)
        std::erase_if(pidfds_, [&](const auto& kv) {
            return kv.first >= fd(e.args[0]) && static_cast<uint64_t>(kv.first) <= e.args[1];
        });
    if (e.nr == SYS_pidfd_open)
        pidfds_[fd(e.ret)] = static_cast<int64_t>(e.args[0]);
    switch (effect) {
    case FdEffect::None:
        break;
    case FdEffect::NewFd:
        streams_.erase(fd(e.ret));
        break;
    case FdEffect::NewFdPair:
        for (const auto& m : e.memory) {
            if (m.dir != Direction::Out || m.bytes.size() < 8)
                continue;
            int pair[2];
            std::memcpy(pair, m.bytes.data(), 8);
            streams_.erase(pair[0]);
            streams_.erase(pair[1]);
        }
        break;
    case FdEffect::Dup:
    case FdEffect::Dup2: {
        int target = fd(e.ret);
        int s = stream_of(e.args[0]);
        if (s >= 0)
            streams_[target] = s;
        else
            streams_.erase(target);
        break;
    }
    case FdEffect::Close:
        streams_.erase(fd(e.args[0]));
        break;
    case FdEffect::CloseRange:
        for (auto it = streams_.begin(); it != streams_.end();)
            it = (it->first >= fd(e.args[0]) && static_cast<uint64_t>(it->first) <= e.args[1]) ? streams_.erase(it)
                                                                                               : std::next(it);
        break;
    }
}

std::optional<int64_t> StdioFds::process_of_pidfd(uint64_t fd) const
{
    auto it = pidfds_.find(static_cast<int>(fd));
    return it == pidfds_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

void StdioFds::copied_from_process(uint64_t fd, int stream)
{
    if (stream >= 0)
        streams_[static_cast<int>(fd)] = stream;
    else
        streams_.erase(static_cast<int>(fd));
}

} // namespace rw::replay
