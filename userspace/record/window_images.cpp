#include "window_images.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "phase_times.h"
#include "record_meta.h"
#include "process_image.h"
#include "trace_dir.h"

namespace rw {

// A new start image of the flight recorder (Supervisor::Options::roll_over):
// the copy is made while the threads are stopped, CRIU saves it once they
// run again (the function returned).
std::function<void(std::chrono::duration<double>)>
take_window_image(Tid tgid, const std::vector<std::pair<pid_t, int>>& stopped, WindowImageParts p)
{
    auto t0 = std::chrono::steady_clock::now();
    p.writer.flush(); // the stretch starts with a chunk
    auto stretch = std::make_shared<FlightWindow::Stretch>();
    stretch->first_event = p.writer.events_on_disk();
    stretch->offset = p.writer.file_bytes();
    stretch->image = p.window.next_image();
    stretch->started = t0;
    stretch->maker = p.options.start_images();
    std::vector<pid_t> tids;
    for (auto [tid, restarted] : stopped)
        tids.push_back(tid);
    pid_t copy = 0;
    PhaseTimes times(t0);
    p.capture.unrecorded(tids, [&] {
        times.ended("flush");
        ImagePoint at = p.attachment.point_now(stopped);
        times.ended("threads");
        copy = p.attachment.fork_copy(at);
        times.ended("fork");
        try {
            if (!p.random_sites.unplant_in_copy(tgid, copy))
                throw std::runtime_error("rewind's int3s cannot be taken out of the copy");
            p.attachment.park_copy(copy);
            times.ended("park");
            stretch->maker.describe({at}, {});
            times.ended("describe");
            stretch->meta = meta_of_running(tgid, p.options);
            stretch->meta.thread_mode = "serialized";
            times.ended("meta");
            stretch->mappings = read_mappings(tgid);
            p.files.store_mappings(tgid, stretch->mappings);
            times.ended("mappings");
            stretch->meta.attached->threads = at.threads.size();
            stretch->meta.attached->mappings = stretch->mappings;
        } catch (...) {
            p.attachment.discard_copy(copy);
            throw;
        }
    });
    for (auto [tid, sig] : p.attachment.take_held_signals())
        ::syscall(SYS_tgkill, tgid, tid, sig);
    if (std::getenv("REWIND_RECORD_STATS"))
        std::fprintf(stderr, "rewind: the start image's copy: %s\n", times.describe().c_str());
    return [p, stretch, copy](std::chrono::duration<double> paused) {
        stretch->meta.attached->pause_seconds = paused.count();
        try {
            stretch->maker.dump(p.dir, stretch->image, {copy});
            p.attachment.discard_copy(copy);
            p.window.add(std::move(*stretch));
        } catch (const std::exception& e) {
            p.attachment.discard_copy(copy);
            p.window.missed(e.what());
        }
    };
}

// The flight recorder's window so far, as a trace of its own beside the
// recording (TRACE.N), which goes on.
void write_window_copy(const std::filesystem::path& dir, FlightWindow& window, uint32_t kernel_hz)
{
    std::filesystem::path dest;
    for (int n = 1; dest.empty() || std::filesystem::exists(dest); n++)
        dest = dir.string() + "." + std::to_string(n);
    try {
        TraceEnd end;
        end.ended = iso_time_utc(unix_time_ns());
        end.detached = true;
        end.detach_reason = "a copy of the flight recorder's window; the recording went on";
        end.kernel_hz = kernel_hz;
        const FlightWindow::Stretch& first = window.copy_to(dest, end);
        FlightWindow::complete(dest, first, end);
        end.complete = true;
        write_end(dest, end);
        std::fprintf(stderr, "rewind: the window so far (%.1f s, %llu events) is in %s; the recording goes on\n",
                     static_cast<double>(end.duration_ns) / 1e9, static_cast<unsigned long long>(end.events),
                     dest.c_str());
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rewind: the window so far cannot be written to %s: %s\n", dest.c_str(), e.what());
    }
}

} // namespace rw
