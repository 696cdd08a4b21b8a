#include "start_image.h"

#include <chrono>
#include <stdexcept>

#include "criu_landmark.h"
#include "replayer.h"
#include "thread_state.h"
#include "trace.h"
#include "trace_meta.h"
#include "tracee.h"

namespace rw::replay {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

fs::path partial_dir(const fs::path& trace, const std::string& dir)
{
    return trace / ("." + dir + ".partial");
}

} // namespace

void StartImageWriter::describe(pid_t tgid, const std::vector<StartThread>& threads, uint64_t syscall_insn)
{
    // The replayer's bookkeeping at event 0, as snapshot_state_to_json
    // writes it for a landmark made in a replay.
    json tasks = json::array();
    for (const auto& t : threads) {
        ReplaySnapshot::TaskCopy c;
        c.recorded_tid = t.tid;
        c.regs = t.regs;
        c.state = read_thread_state(t.tid);
        c.clear_child_tid = t.clear_child_tid;
        c.last_resume = Resume::Cont;
        // The leader's copy is the process image; the others are made again by clone.
        tasks.push_back(task_copy_to_json(c, tasks.empty() ? 0 : -1));
    }
    manifest_.state = {{"tasks", tasks},
                       {"groups", json::array({group_copy_to_json({tgid, StdioFds::inherited()})})},
                       {"vms", json::array({{{"id", 0}, {"syscall_insn", syscall_insn}}})},
                       {"finished", json::array()},
                       {"cursor", 0},
                       {"taken_ahead", json::array()},
                       {"initial_tid", tgid},
                       {"next_vm_id", 1},
                       {"warned_unechoed", false}};
    manifest_.position = perfclock::Position{0, {}};
    described_ = true;
}

void StartImageWriter::dump(const fs::path& trace, const std::string& dir, pid_t copy)
{
    if (!described_)
        throw std::runtime_error("the start image's threads were not described");
    std::string criu = find_criu();
    if (criu.empty())
        throw std::runtime_error("CRIU is not installed (scripts/install-criu.sh); the start image of an attached "
                                 "process is a CRIU image");
    fs::path partial = partial_dir(trace, dir);
    fs::remove_all(partial);
    fs::create_directories(partial);
    auto t0 = std::chrono::steady_clock::now();
    LandmarkImage image = dump_parked_copy(criu, copy, partial / "p0");
    manifest_.dump_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    manifest_.image_bytes = image.bytes;
    manifest_.processes = {"p0"};
    taken_ = true;
}

void StartImageWriter::finish(const fs::path& trace, const std::string& dir, uint64_t events,
                              const std::vector<Mapping>& mappings)
{
    if (!taken_)
        throw std::runtime_error("no start image was taken");
    manifest_.trace_events = events;
    manifest_.trace_id = trace_identity(read_meta(trace));
    ExecEvent image;
    image.mappings = mappings;
    manifest_.mounts = Replayer::mapped_copies(image);
    seal_landmark(partial_dir(trace, dir), trace / dir, manifest_);
}

bool start_from_image(LandmarkSet& set, Timeline& timeline, Replayer& replayer)
{
    const auto& attached = replayer.trace().meta().attached;
    if (!attached)
        return false;
    try {
        replayer.restore(*set.beginning(timeline, replayer).snapshot);
    } catch (const std::runtime_error& e) {
        throw ReplayError(ReplayErrorKind::Refused, 0, attached->pid, e.what());
    }
    return true;
}

LandmarkEntry start_image_entry(const Trace& trace)
{
    LandmarkEntry e;
    const auto& attached = trace.meta().attached;
    e.name = "start image";
    if (!attached) {
        e.problem = "the trace was not recorded by attaching to a process";
        return e;
    }
    e.dir = trace.dir() / (attached->start_image.empty() ? std::string("start") : attached->start_image);
    std::error_code ec;
    if (fs::symlink_status(e.dir, ec).type() != fs::file_type::directory) {
        e.problem = "the trace has no start image (" + e.dir.filename().string() +
                    "/): the recording was cut short while it attached";
        return e;
    }
    try {
        LandmarkManifest m = read_manifest(e.dir);
        if (m.trace_id != trace_identity(trace))
            e.problem = "it was made for another recording";
        else if (m.position.event != 0)
            e.problem = "it does not stand at event 0";
        else
            e.manifest = std::move(m);
    } catch (const std::exception& x) {
        e.problem = x.what();
    }
    return e;
}

} // namespace rw::replay
