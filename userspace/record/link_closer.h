// Closes BPF link descriptors from worker threads, many at once.
//
// Closing a multi-uprobe link returns only after the kernel's grace
// periods for uprobes (30 to 45 ms each on our VMs). One after another, the
// links of a recording that started 41 processes took 3.6 s to close; closed
// at once from separate threads they share grace periods and took 70 ms.
// So each link is closed by a worker thread of its own, up to kMaxWorkers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "unique_fd.h"

namespace rw {

class LinkCloser {
public:
    static constexpr size_t kMaxWorkers = 64;

    LinkCloser() = default;
    ~LinkCloser();
    LinkCloser(const LinkCloser&) = delete;
    LinkCloser& operator=(const LinkCloser&) = delete;

    // Returns at once; the descriptors are closed soon after.
    void close(std::vector<UniqueFd> links);
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
