// Hands BPF links to a process of their own, which closes them.
//
// A link's close waits for the kernel's uprobe grace periods (see
// link_closer.h): the last ones, of the program's main process, would make
// every `rewind record --parallel` end 30 to 45 ms after its program. So the
// recorder starts a holder process first (detached: a new session, no
// terminal, no descriptor of the recorder's but a socket), passes it each
// link (SCM_RIGHTS) and closes its own copy, which is not the last one and
// returns at once. The holder closes what it receives with a LinkCloser and
// ends once the recorder's end of the socket is closed and its closes are
// done; nothing waits for it. Where no holder can be started (the recorder
// already runs threads, so a forked copy could not safely start its own),
// or if it is gone, links are closed by this process's LinkCloser.
#pragma once

#include <sys/types.h>

#include <vector>

#include "link_closer.h"
#include "unique_fd.h"

namespace rw {

class LinkReleaser {
public:
    // With `holder`, starts the holder process now (it costs a fork).
    explicit LinkReleaser(bool holder);
    ~LinkReleaser();
    LinkReleaser(const LinkReleaser&) = delete;
    LinkReleaser& operator=(const LinkReleaser&) = delete;

    // Returns at once. This process no longer has the descriptors.
    void release(std::vector<UniqueFd> links);
    // Returns once the links this process closes itself are closed.
    void finish();

    // The holder's pid, or -1 if links are closed here.
    pid_t holder() const { return holder_pid_; }

private:
    bool hand_over(std::vector<UniqueFd>& links);

    UniqueFd holder_;
    pid_t holder_pid_ = -1;
    LinkCloser local_;
};

} // namespace rw
