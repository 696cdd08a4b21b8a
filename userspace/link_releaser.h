// Closes BPF link descriptors off the recorder's path.
//
// Closing a multi-uprobe link returns only after the kernel's grace
// periods for uprobes (30 to 45 ms each on our VMs). One after another, the
// links of a recording that started 41 processes took 3.6 s to close at its
// end; closed at once from separate threads they share grace periods and
// took 70 ms. So each released link is closed by a worker thread, up to
// kMaxWorkers at a time, while the recording goes on.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "unique_fd.h"

namespace rw {

class LinkReleaser {
public:
    static constexpr size_t kMaxWorkers = 64;

    LinkReleaser() = default;
    ~LinkReleaser();
    LinkReleaser(const LinkReleaser&) = delete;
    LinkReleaser& operator=(const LinkReleaser&) = delete;

    // Returns at once; the descriptors are closed soon after.
    void release(std::vector<UniqueFd> links);
    // Returns once every descriptor released so far is closed.
    void finish();

    size_t workers() const;

private:
    void work();

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    std::deque<UniqueFd> pending_;
    std::vector<std::thread> workers_;
    size_t idle_ = 0;
    size_t closing_ = 0;
    bool stopping_ = false;
};

} // namespace rw
