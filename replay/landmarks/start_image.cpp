#include "start_image.h"

#include <sys/shm.h>
#include <sys/syscall.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <span>
#include <stdexcept>
#include <system_error>

#include "criu_landmark.h"
#include "process_image.h"
#include "thread_injector.h"
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

void StartImageWriter::describe(const std::vector<StartProcess>& processes,
                                const std::vector<StartSharedMemory>& shared)
{
    // The replayer's bookkeeping at event 0, as snapshot_state_to_json
    // writes it for a landmark made in a replay: a thread group and an
    // address space per process.
    json tasks = json::array(), groups = json::array(), vms = json::array();
    std::map<pid_t, size_t> index;
    for (const auto& p : processes) {
        size_t i = groups.size();
        index[p.tgid] = i;
        for (const auto& t : p.threads) {
            ReplaySnapshot::TaskCopy c;
            c.recorded_tid = t.tid;
            c.regs = t.regs;
            c.state = read_thread_state(t.tid);
            c.clear_child_tid = t.clear_child_tid;
            c.last_resume = Resume::Cont;
            c.group = i;
            c.vm = i;
            // The leader's copy is the process image; the others are made again by clone.
            tasks.push_back(task_copy_to_json(c, &t == &p.threads.front() ? static_cast<int>(i) : -1));
        }
        groups.push_back(group_copy_to_json({p.tgid, StdioFds::inherited()}));
        vms.push_back({{"id", i}, {"syscall_insn", p.syscall_insn}});
    }
    json memory = json::array();
    for (const auto& s : shared) {
        json at = json::array();
        for (auto [pid, addr] : s.mapped_at)
            at.push_back({index.at(pid), addr});
        memory.push_back({{"length", s.length}, {"writable", s.writable}, {"mapped_at", at}});
    }
    manifest_.state = {{"tasks", tasks},
                       {"groups", groups},
                       {"vms", vms},
                       {"finished", json::array()},
                       {"cursor", 0},
                       {"taken_ahead", json::array()},
                       {"initial_tid", processes.front().tgid},
                       {"next_vm_id", processes.size()},
                       {"warned_unechoed", false}};
    if (!memory.empty())
        manifest_.state["shared_memory"] = memory;
    manifest_.position = perfclock::Position{0, {}};
    processes_ = processes.size();
    described_ = true;
}

void StartImageWriter::dump(const fs::path& trace, const std::string& dir, const std::vector<pid_t>& copies)
{
    if (!described_)
        throw std::runtime_error("the start image's threads were not described");
    if (copies.size() != processes_)
        throw std::runtime_error("the start image has " + std::to_string(processes_) + " processes, not " +
                                 std::to_string(copies.size()) + " copies");
    std::string criu = find_criu();
    if (criu.empty())
        throw std::runtime_error("CRIU is not installed (scripts/install-criu.sh); the start image of an attached "
                                 "process is a CRIU image");
    fs::path partial = partial_dir(trace, dir);
    fs::remove_all(partial);
    fs::create_directories(partial);
    auto t0 = std::chrono::steady_clock::now();
    manifest_.processes.clear();
    manifest_.image_bytes = 0;
    for (pid_t copy : copies) {
        std::string name = "p" + std::to_string(manifest_.processes.size());
        manifest_.image_bytes += dump_parked_copy(criu, copy, partial / name).bytes;
        manifest_.processes.push_back(name);
    }
    manifest_.dump_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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

void share_again(const json& state, const std::vector<pid_t>& copies)
{
    if (!state.contains("shared_memory"))
        return;
    for (const auto& region : state["shared_memory"]) {
        auto length = region.at("length").get<uint64_t>();
        bool writable = region.value("writable", true);
        std::vector<std::pair<pid_t, uint64_t>> at;
        for (const auto& a : region.at("mapped_at")) {
            auto i = a.at(0).get<size_t>();
            if (i >= copies.size())
                throw std::runtime_error("its shared memory names a process it does not have");
            at.push_back({copies[i], a.at(1).get<uint64_t>()});
        }
        if (at.empty())
            continue;
        // A System V segment of the replay's, as the replay's shmat makes
        // (sysv_segments.h): attached where each process had the memory,
        // over its private copy, with the first one's content.
        int id = shmget(IPC_PRIVATE, length, IPC_CREAT | 0600);
        if (id < 0)
            throw std::system_error(errno, std::generic_category(), "a shared memory segment for the start image");
        struct Removed {
            int id;
            ~Removed() { shmctl(id, IPC_RMID, nullptr); }
        } removed{id};
        {
            void* mine = shmat(id, nullptr, 0);
            if (mine == reinterpret_cast<void*>(-1))
                throw std::system_error(errno, std::generic_category(), "shmat of the start image's shared memory");
            std::span<uint8_t> bytes(static_cast<uint8_t*>(mine), length);
            TraceeMemory(at.front().first).read_partial(RemoteAddr(at.front().second), bytes);
            shmdt(mine);
        }
        for (auto [pid, addr] : at) {
            // Its owner: the process that attaches it (another user's, maybe).
            struct shmid_ds ds {};
            shmctl(id, IPC_STAT, &ds);
            if (auto uid = proc_status_number(pid, "Uid"))
                ds.shm_perm.uid = static_cast<uid_t>(*uid);
            shmctl(id, IPC_SET, &ds);
            ThreadInjector in(pid, find_syscall_instruction(pid));
            int64_t r = in.call(SYS_shmat, static_cast<uint64_t>(id), addr,
                                static_cast<uint64_t>(SHM_REMAP | (writable ? 0 : SHM_RDONLY)));
            if (r != static_cast<int64_t>(addr))
                throw std::runtime_error("the memory its processes shared cannot be shared again at " +
                                         std::to_string(addr) + ": " + strerror(static_cast<int>(-r)));
        }
    }
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
