// The flight recorder (rewind record --pid PID --window 10m|2GiB): the
// recording goes on for as long as the process runs, and only its end is
// kept. Start images are taken again as it goes (Supervisor::Options::
// roll_over); each begins a stretch of the event stream that replays from
// it, and every later event replays from it too. A stretch the window no
// longer needs is dropped: its image removed, the disk blocks of its events
// freed. At the end the oldest stretch kept becomes the trace's beginning:
// its image the trace's start image, its meta.json the trace's, the events
// from it on (renumbered from 0) its event stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "event.h"
#include "recorder.h"
#include "trace_meta.h"

namespace rw {

class EventStreamWriter;

class FlightWindow {
public:
    // A stretch of the stream, from a start image on.
    struct Stretch {
        uint64_t first_event = 0; // in the stream as written
        uint64_t offset = 0;      // where its first chunk starts
        std::chrono::steady_clock::time_point started;
        std::string image; // its image's directory name in the trace, once complete
        uint64_t image_bytes = 0;
        TraceMeta meta; // the trace's, should it be the first kept
        std::vector<Mapping> mappings;
        StartImageMaker maker;
    };

    FlightWindow(std::filesystem::path trace, RecordWindow size, EventStreamWriter& writer);

    // Whether a new start image is due.
    bool due() const;
    // A name for the next image's directory.
    std::string next_image() const { return "start." + std::to_string(taken_); }
    // A stretch whose image is taken (partial, made complete by freeze), from
    // the writer's current end on (flushed); drops what is no longer needed.
    void add(Stretch stretch);
    // A start image that could not be taken, and why.
    void missed(const std::string& why) { missed_[why]++; }

    // The end: the trace becomes the window (see above); returns the
    // stretch it starts with. `end` gets the window's account.
    const Stretch& freeze(TraceEnd& end);
    // The window so far as a trace of its own in `dest` (new), while the
    // recording goes on: its events up to the last written, the files
    // linked; the same account in `end`.
    const Stretch& copy_to(const std::filesystem::path& dest, TraceEnd& end);
    // Completes a window's trace in `dir` (after freeze or copy_to): the
    // counts of `end` from its events, its start image sealed.
    static void complete(const std::filesystem::path& dir, const Stretch& first, TraceEnd& end);

private:
    // The index in stretches_ of the oldest stretch the window needs now.
    size_t oldest_needed() const;
    void drop_before(size_t index);
    void account(const Stretch& first, TraceEnd& end) const;

    std::filesystem::path trace_;
    RecordWindow size_;
    EventStreamWriter& writer_;
    std::deque<Stretch> stretches_;
    uint64_t taken_ = 0;
    std::map<std::string, uint64_t> missed_;
    std::chrono::steady_clock::time_point began_ = std::chrono::steady_clock::now();
};

// The size of a directory's files, recursively.
uint64_t directory_bytes(const std::filesystem::path& dir);

} // namespace rw
