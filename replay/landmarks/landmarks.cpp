#include "landmarks.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

#include "private_copy.h"
#include "process_image.h"
#include "start_image.h"
#include "tracee.h"
#include "vdso.h"

namespace rw::replay {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

std::string trace_identity(const TraceMeta& meta)
{
    return std::to_string(meta.created_unix_ns) + "/" + meta.program;
}

std::string trace_identity(const Trace& trace)
{
    return trace_identity(trace.meta());
}

namespace {

uint64_t trace_events(const Trace& trace)
{
    return trace.end() ? trace.end()->events : 0;
}

// Whether a landmark belongs to this trace: one copied in from another
// recording would replay someone else's program.
std::string foreign(const Trace& trace, const LandmarkManifest& m)
{
    if (m.trace_id != trace_identity(trace))
        return "it was made for another recording";
    if (m.trace_events != trace_events(trace))
        return "it was made for a trace of " + std::to_string(m.trace_events) + " events; this one has " +
               std::to_string(trace_events(trace));
    if (m.position.event >= m.trace_events || !m.position.path.empty())
        return "its position " + m.position.describe() + " is not an event boundary of the trace";
    return "";
}

} // namespace

std::vector<LandmarkEntry> list_landmarks(const Trace& trace)
{
    std::vector<LandmarkEntry> out;
    fs::path root = trace.dir() / kLandmarksDir;
    std::error_code ec;
    // A trace's directories are never followed through a link (trace_file.h).
    if (fs::symlink_status(root, ec).type() != fs::file_type::directory)
        return out;
    for (const auto& d : fs::directory_iterator(root, ec)) {
        // (".<n>.partial": one being written, or cut short; never used.)
        if (d.path().filename().string().rfind('.', 0) == 0)
            continue;
        if (d.symlink_status(ec).type() != fs::file_type::directory) {
            if (d.is_symlink(ec))
                out.push_back({d.path(), d.path().filename().string(), std::nullopt,
                               "it is a symbolic link, which rewind never follows in a trace"});
            continue;
        }
        LandmarkEntry e;
        e.dir = d.path();
        e.name = d.path().filename().string();
        try {
            LandmarkManifest m = read_manifest(e.dir);
            e.problem = foreign(trace, m);
            if (e.problem.empty())
                e.manifest = std::move(m);
        } catch (const std::exception& x) {
            e.problem = x.what();
        }
        out.push_back(std::move(e));
    }
    std::sort(out.begin(), out.end(), [](const LandmarkEntry& a, const LandmarkEntry& b) {
        if (a.manifest.has_value() != b.manifest.has_value())
            return !a.manifest.has_value();
        if (a.manifest && a.manifest->position.event != b.manifest->position.event)
            return a.manifest->position.event < b.manifest->position.event;
        return a.name < b.name;
    });
    return out;
}

std::vector<std::string> verify_landmark(const Trace& trace, const LandmarkEntry& entry)
{
    if (!entry.manifest)
        return {entry.problem};
    std::vector<std::string> problems = verify_files(entry.dir, *entry.manifest);
    if (std::string why = foreign(trace, *entry.manifest); !why.empty())
        problems.push_back(why);
    for (const auto& p : entry.manifest->processes) {
        bool listed = std::any_of(entry.manifest->files.begin(), entry.manifest->files.end(),
                                  [&](const LandmarkFile& f) { return f.path.rfind(p + "/", 0) == 0; });
        if (!listed)
            problems.push_back("no image file of process copy " + p + " is listed");
    }
    return problems;
}

void seal_landmark(const fs::path& partial, const fs::path& dir, LandmarkManifest& m)
{
    for (const auto& p : m.processes)
        for (const auto& f : fs::directory_iterator(partial / p))
            if (f.is_regular_file() && f.path().filename() != "dump.log")
                m.files.push_back(describe_file(partial, p + "/" + f.path().filename().string()));
    std::sort(m.files.begin(), m.files.end(),
              [](const LandmarkFile& a, const LandmarkFile& b) { return a.path < b.path; });
    write_manifest(partial, m);
    // Like the rest of the trace: the images hold the program's memory.
    fs::permissions(partial, fs::perms::owner_all);
    for (const auto& f : fs::recursive_directory_iterator(partial))
        fs::permissions(f.path(),
                        f.is_directory() ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
    fs::rename(partial, dir);
}

namespace {

// The memory the copies share with each other (not files: the kernel's
// shared memory, MAP_SHARED anonymous or System V), as the state's
// "shared_memory" lists it for share_again: each part of an object that
// two or more copies map, with the copies' indices and addresses. CRIU
// restores each copy alone; share_again makes it one again. Throws
// std::runtime_error for parts that overlap without being the same.
nlohmann::json shared_between(const std::vector<pid_t>& copies)
{
    struct Part {
        uint64_t dev, ino, offset, length;
        bool writable;
        std::string path;
        std::vector<std::pair<size_t, uint64_t>> at;
    };
    std::vector<Part> parts;
    for (size_t i = 0; i < copies.size(); i++)
        for (const auto& s : read_shared_writable_mappings(copies[i])) {
            const Mapping& m = s.mapping;
            if (m.path.find("/dev/zero (deleted)") == std::string::npos && m.path.rfind("/SYSV", 0) != 0)
                continue;
            uint64_t length = m.end - m.start;
            auto same = std::find_if(parts.begin(), parts.end(), [&](const Part& p) {
                return p.dev == s.dev && p.ino == s.ino && p.offset == m.offset && p.length == length;
            });
            if (same != parts.end()) {
                same->at.push_back({i, m.start});
                continue;
            }
            parts.push_back({s.dev, s.ino, m.offset, length, m.perms.size() > 1 && m.perms[1] == 'w', m.path, {}});
            parts.back().at.push_back({i, m.start});
        }
    nlohmann::json out = nlohmann::json::array();
    for (const auto& p : parts) {
        std::set<size_t> by;
        for (auto [i, addr] : p.at)
            by.insert(i);
        if (by.size() < 2)
            continue;
        for (const auto& o : parts)
            if (&o != &p && o.dev == p.dev && o.ino == p.ino && o.offset < p.offset + p.length &&
                p.offset < o.offset + o.length)
                throw std::runtime_error("its processes map overlapping parts of " + p.path +
                                         " shared, which a landmark cannot share again");
        nlohmann::json at = nlohmann::json::array();
        for (auto [i, addr] : p.at)
            at.push_back({i, addr});
        out.push_back({{"length", p.length}, {"writable", p.writable}, {"mapped_at", at}});
    }
    return out;
}

} // namespace

LandmarkManifest write_landmark(Replayer& replayer, const fs::path& dir, const std::string& criu)
{
    if (fs::exists(dir))
        throw std::runtime_error(dir.string() + " already exists");
    // Made under a temporary name and renamed when complete: a landmark
    // cut short (rewind killed, disk full) is never found half-written.
    fs::path partial = dir.parent_path() / ("." + dir.filename().string() + ".partial");
    fs::remove_all(partial);
    fs::create_directories(partial);
    try {
        if (std::string why; !replayer.can_snapshot(&why, true))
            throw std::runtime_error("no landmark here: " + why);
        auto snap = replayer.take_snapshot(false);
        LandmarkManifest m;
        m.position = perfclock::Position{snap->next_event(), {}};
        m.trace_events = trace_events(replayer.trace());
        m.trace_id = trace_identity(replayer.trace());
        m.mounts = snap->mounts;
        m.state = snapshot_state_to_json(*snap);
        std::vector<pid_t> copies;
        std::vector<uint64_t> syscall_insns;
        for (const auto& t : snap->tasks)
            if (t.pid) {
                copies.push_back(t.pid);
                syscall_insns.push_back(snap->vms[t.vm].syscall_insn);
            }
        if (auto shared = shared_between(copies); !shared.empty()) {
            m.state["shared_memory"] = shared;
            // CRIU dumps a System V segment only with its IPC namespace:
            // each copy keeps the content as its own, shared again at restore.
            for (const auto& part : shared)
                for (const auto& at : part["mapped_at"]) {
                    auto i = at[0].get<size_t>();
                    auto addr = at[1].get<uint64_t>();
                    make_private(copies[i], syscall_insns[i],
                                 Mapping{addr, addr + part["length"].get<uint64_t>(),
                                         part["writable"].get<bool>() ? "rw-s" : "r--s", 0, "shared memory", ""});
                }
        }
        auto t0 = Clock::now();
        for (const auto& t : snap->tasks) {
            if (!t.pid)
                continue;
            // A private copy of a shared writable mapping is a temporary
            // file that goes with this replay: a restore would not find it.
            for (const auto& mapping : read_mappings(t.pid))
                if (mapping.path.rfind("/tmp/rewind-shared-", 0) == 0)
                    throw std::runtime_error("process " + std::to_string(snap->groups[t.group].recorded_tgid) +
                                             " has a shared writable mapping of a file, which a landmark cannot keep");
            // CRIU refuses a thread stopped in a syscall; the copy is not
            // (it stands in the fork's return), but its registers still say
            // which call the original was in. Nothing reads that here.
            Registers regs = get_registers(t.pid);
            regs[Registers::ORIG_RAX] = static_cast<uint64_t>(-1);
            set_registers(t.pid, regs);
            std::string name = "p" + std::to_string(m.processes.size());
            LandmarkImage image = dump_landmark(criu, t.pid, {t.pid}, partial / name, kReplayPtraceOptions);
            m.image_bytes += image.bytes;
            m.processes.push_back(name);
        }
        m.dump_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        seal_landmark(partial, dir, m);
        return m;
    } catch (...) {
        std::error_code ec;
        fs::remove_all(partial, ec);
        throw;
    }
}

LoadedLandmark load_landmark(Replayer& replayer, const LandmarkEntry& entry, const std::string& criu,
                             bool trust_unsigned)
{
    if (!entry.manifest)
        throw std::runtime_error(entry.problem);
    const LandmarkManifest& m = *entry.manifest;
    if (!m.authentic && !trust_unsigned)
        throw std::runtime_error(m.not_authentic + "; --trust-landmarks restores it all the same");
    if (criu.empty())
        throw std::runtime_error("CRIU is not installed (scripts/install-criu.sh)");
    if (auto problems = verify_files(entry.dir, m); !problems.empty()) {
        std::string all;
        for (const auto& p : problems)
            all += (all.empty() ? "" : "; ") + p;
        throw std::runtime_error(all);
    }
    std::vector<BindMount> binds;
    try {
        binds = replayer.binds_of(m.mounts);
    } catch (const ReplayError& e) {
        throw std::runtime_error(std::string("the trace's files it needs cannot be used: ") + e.what());
    }
    auto prepare = [&binds](pid_t holder) { return apply_bind_mounts_in(holder, binds); };
    auto t0 = Clock::now();
    LoadedLandmark out;
    std::vector<pid_t> pids;
    for (const auto& p : m.processes) {
        out.copies.push_back(RestoredLandmark::restore(criu, entry.dir / p, {}, kReplayPtraceOptions, prepare));
        pids.push_back(out.copies.back().pid());
        // CRIU maps the kernel's own vDSO: patched again, as at the exec.
        if (std::string why = patch_vdso_of(pids.back()); !why.empty())
            throw std::runtime_error("its process " + p + ": " + why);
    }
    share_again(m.state, pids);
    out.snapshot = std::make_unique<ReplaySnapshot>(replayer.waiter());
    snapshot_state_from_json(m.state, pids, *out.snapshot);
    if (m.state.contains("shared_memory"))
        out.snapshot->shared_memory = SharedMemory::save(pids);
    out.snapshot->mounts = m.mounts;
    out.snapshot->restored_by_criu = true;
    if (out.snapshot->next_event() != m.position.event)
        throw std::runtime_error("its replayer state stands at event " + std::to_string(out.snapshot->next_event()) +
                                 ", not at its position " + m.position.describe());
    // Each copy gets back the registers its process had, as an in-memory
    // snapshot's copy has them (the dump cleared the syscall number).
    for (const auto& t : out.snapshot->tasks)
        if (t.pid)
            set_registers(t.pid, t.regs);
    out.position = m.position;
    out.restore_time = Clock::now() - t0;
    return out;
}

LandmarkSet::LandmarkSet(const Trace& trace, std::function<void(const std::string&)> say, bool trust_unsigned,
                         bool use_landmarks)
    : trace_(trace), say_(std::move(say)), trust_unsigned_(trust_unsigned)
{
    auto all = use_landmarks ? list_landmarks(trace) : std::vector<LandmarkEntry>{};
    for (auto& e : all) {
        if (!e.manifest) {
            say_("landmark " + e.name + " is skipped: " + e.problem);
            continue;
        }
        // CRIU restores what the images say, as root: only what this user
        // made here, unless told otherwise.
        if (!e.manifest->authentic && !trust_unsigned) {
            say_("landmark " + e.name + " is skipped: " + e.manifest->not_authentic +
                 "; --trust-landmarks restores it all the same");
            continue;
        }
        Slot s;
        s.entry = std::move(e);
        entries_.push_back(std::move(s));
    }
    if (!entries_.empty()) {
        criu_ = find_criu();
        if (criu_.empty()) {
            say_("the trace's landmarks are not used: CRIU is not installed (scripts/install-criu.sh)");
            entries_.clear();
        }
    }
}

const Timeline::Entry* LandmarkSet::bring_in(const perfclock::Position& target, const perfclock::Position& after,
                                             Timeline& timeline, Replayer& replayer)
{
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
        Slot& s = *it;
        const perfclock::Position& pos = s.entry.manifest->position;
        if (!pos.at_or_before(target) || pos.event <= after.event)
            continue;
        if (s.loaded)
            return s.loaded;
        if (s.tried)
            continue;
        s.tried = true;
        try {
            LoadedLandmark l = load_landmark(replayer, s.entry, criu_, trust_unsigned_);
            s.copies = std::move(l.copies);
            s.loaded =
                &timeline.add(Timeline::Kind::Landmark, l.position, std::move(l.snapshot), "landmark " + s.entry.name);
            char took[32];
            std::snprintf(took, sizeof took, "%.2f", l.restore_time.count());
            say_("using landmark " + s.entry.name + " (event " + std::to_string(pos.event) + "), restored in " + took +
                 " s");
            return s.loaded;
        } catch (const std::exception& e) {
            say_("landmark " + s.entry.name + " (event " + std::to_string(pos.event) + ") is skipped: " + e.what());
        }
    }
    return nullptr;
}

void LandmarkSet::failed(const Timeline::Entry& entry, const std::string& why)
{
    for (auto& s : entries_)
        if (s.loaded == &entry) {
            say_("landmark " + s.entry.name + " (event " + std::to_string(s.entry.manifest->position.event) +
                 ") is skipped: restoring the replay from it failed: " + why);
            s.loaded = nullptr;
        }
}

const Timeline::Entry& LandmarkSet::beginning(Timeline& timeline, Replayer& replayer)
{
    LandmarkEntry entry = start_image_entry(trace_);
    if (!entry.manifest)
        throw std::runtime_error("the start image cannot be used: " + entry.problem);
    std::string criu = criu_.empty() ? find_criu() : criu_;
    LoadedLandmark l;
    try {
        l = load_landmark(replayer, entry, criu, trust_unsigned_);
    } catch (const std::exception& e) {
        throw std::runtime_error(std::string("the start image cannot be restored: ") + e.what());
    }
    start_ = std::move(l.copies);
    return timeline.add(Timeline::Kind::Beginning, l.position, std::move(l.snapshot), "the attach point");
}

bool LandmarkSet::owns(const Timeline::Entry& entry) const
{
    return std::any_of(entries_.begin(), entries_.end(), [&](const Slot& s) { return s.loaded == &entry; });
}

} // namespace rw::replay
