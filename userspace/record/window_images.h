// The flight recorder's start images taken while recording (record
// --window), and the copies of its window written on a signal.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include "attach.h"
#include "attached_tree.h"
#include "bpf_capture.h"
#include "event_stream.h"
#include "flight_window.h"
#include "mapped_files.h"
#include "random_sites.h"
#include "recorder.h"

namespace rw {

// What a start image in the middle of the recording works with.
struct WindowImageParts {
    Attachment& attachment;
    BpfCapture& capture;
    EventStreamWriter& writer;
    RandomSites& random_sites;
    MappedFiles& files;
    FlightWindow& window;
    const RecordOptions& options;
    std::filesystem::path dir;
};

// A new start image of the flight recorder (Supervisor::Options::roll_over):
// the copy is made while the threads are stopped, CRIU saves it once they
// run again (the function returned).
std::function<void(std::chrono::duration<double>)>
take_window_image(Tid tgid, const std::vector<std::pair<pid_t, int>>& stopped, WindowImageParts p);

// The flight recorder's window so far, as a trace of its own beside the
// recording (TRACE.N), which goes on.
void write_window_copy(const std::filesystem::path& dir, FlightWindow& window, uint32_t kernel_hz);

} // namespace rw
