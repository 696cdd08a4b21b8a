#include "flight_window.h"

#include <system_error>

#include "event_stream.h"
#include "trace.h"
#include "trace_summary.h"
#include "trace_dir.h"

namespace rw {
namespace fs = std::filesystem;

namespace {

// Where StartImageMaker::dump leaves an image until it is made complete.
fs::path partial_image(const fs::path& trace, const std::string& name)
{
    return trace / ("." + name + ".partial");
}

} // namespace

uint64_t directory_bytes(const fs::path& dir)
{
    uint64_t total = 0;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
        if (it->is_regular_file(ec))
            total += it->file_size(ec);
    return total;
}

FlightWindow::FlightWindow(fs::path trace, RecordWindow size, EventStreamWriter& writer)
    : trace_(std::move(trace)), size_(std::move(size)), writer_(writer)
{}

bool FlightWindow::due() const
{
    if (stretches_.empty())
        return false;
    const Stretch& last = stretches_.back();
    // Half the span (or a quarter of the bytes) per stretch: the window
    // holds between its size and about one and a half times it.
    if (size_.span)
        return std::chrono::steady_clock::now() - last.started >= *size_.span / 2;
    return writer_.file_bytes() - last.offset >= *size_.bytes / 4;
}

size_t FlightWindow::oldest_needed() const
{
    if (stretches_.empty())
        return 0;
    if (size_.span) {
        // The newest stretch that began before the window's span did.
        auto cutoff = std::chrono::steady_clock::now() - *size_.span;
        size_t oldest = 0;
        for (size_t i = 0; i < stretches_.size(); i++)
            if (stretches_[i].started <= cutoff)
                oldest = i;
        return oldest;
    }
    // As many of the newest stretches as fit, the newest one at least.
    uint64_t images = 0;
    size_t oldest = stretches_.size() - 1;
    for (size_t i = stretches_.size(); i-- > 0;) {
        images += stretches_[i].image_bytes;
        if (writer_.file_bytes() - stretches_[i].offset + images > *size_.bytes && i != stretches_.size() - 1)
            break;
        oldest = i;
    }
    return oldest;
}

void FlightWindow::drop_before(size_t index)
{
    for (size_t i = 0; i < index && !stretches_.empty(); i++) {
        std::error_code ec;
        fs::remove_all(partial_image(trace_, stretches_.front().image), ec);
        stretches_.pop_front();
    }
    if (!stretches_.empty())
        writer_.release_before(stretches_.front().offset);
}

void FlightWindow::add(Stretch stretch)
{
    stretch.image_bytes = directory_bytes(partial_image(trace_, stretch.image));
    stretches_.push_back(std::move(stretch));
    taken_++;
    drop_before(oldest_needed());
}

void FlightWindow::account(const Stretch& first, TraceEnd& end) const
{
    auto now = std::chrono::steady_clock::now();
    auto ns = [](std::chrono::steady_clock::duration d) {
        return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(d).count());
    };
    TraceEnd::Window w;
    w.size = size_.text;
    w.recorded_ns = ns(now - began_);
    w.events_dropped = first.first_event;
    w.images_taken = taken_;
    w.images_missed = missed_;
    end.window = w;
    end.duration_ns = ns(now - first.started);
}

const FlightWindow::Stretch& FlightWindow::freeze(TraceEnd& end)
{
    if (stretches_.empty())
        throw std::runtime_error("no start image was taken");
    writer_.flush();
    drop_before(oldest_needed());
    Stretch& first = stretches_.front();
    for (size_t i = 1; i < stretches_.size(); i++) {
        std::error_code ec;
        fs::remove_all(partial_image(trace_, stretches_[i].image), ec);
    }
    fs::path tail = trace_ / (std::string(trace_files::kEvents) + ".window");
    write_stream_tail(trace_ / trace_files::kEvents, first.offset, first.first_event, tail);
    fs::rename(tail, trace_ / trace_files::kEvents);
    fs::path image = partial_image(trace_, trace_files::kStartImage);
    fs::remove_all(image);
    fs::rename(partial_image(trace_, first.image), image);
    first.image = trace_files::kStartImage;
    first.meta.attached->start_image = trace_files::kStartImage;
    write_meta(trace_, first.meta);
    account(first, end);
    return first;
}

namespace {

// `to` gets the files of `from`, linked (they are not written again once
// there), or copied where a link cannot be made.
void link_tree(const fs::path& from, const fs::path& to)
{
    fs::create_directory(to);
    fs::permissions(to, fs::perms::owner_all);
    for (const auto& entry : fs::directory_iterator(from)) {
        fs::path target = to / entry.path().filename();
        if (entry.is_directory()) {
            link_tree(entry.path(), target);
            continue;
        }
        std::error_code ec;
        fs::create_hard_link(entry.path(), target, ec);
        if (ec)
            fs::copy_file(entry.path(), target);
    }
}

} // namespace

const FlightWindow::Stretch& FlightWindow::copy_to(const fs::path& dest, TraceEnd& end)
{
    if (stretches_.empty())
        throw std::runtime_error("no start image was taken");
    writer_.flush();
    drop_before(oldest_needed());
    const Stretch& first = stretches_.front();
    if (!fs::create_directory(dest))
        throw std::runtime_error(dest.string() + " exists already");
    fs::permissions(dest, fs::perms::owner_all);
    link_tree(trace_ / trace_files::kFiles, dest / trace_files::kFiles);
    write_stream_tail(trace_ / trace_files::kEvents, first.offset, first.first_event, dest / trace_files::kEvents);
    link_tree(partial_image(trace_, first.image), partial_image(dest, trace_files::kStartImage));
    TraceMeta meta = first.meta;
    meta.attached->start_image = trace_files::kStartImage;
    write_meta(dest, meta);
    account(first, end);
    return first;
}

void FlightWindow::complete(const fs::path& dir, const Stretch& first, TraceEnd& end)
{
    TraceSummary kept = summarize(Trace(dir));
    end.events = kept.events;
    end.memory_bytes = kept.memory_bytes;
    end.processes = kept.processes.size();
    end.threads = kept.threads.size();
    end.syscall_counts = kept.syscalls;
    end.stream_bytes = fs::file_size(dir / trace_files::kEvents);
    first.maker.finish(dir, trace_files::kStartImage, end.events, first.mappings);
}

} // namespace rw
