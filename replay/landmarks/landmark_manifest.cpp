#include "landmark_manifest.h"

#define XXH_INLINE_ALL
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <memory>
#include <optional>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "landmark_key.h"
#include "trace_file.h"
#include "unique_fd.h"

namespace rw::replay {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string hex128(XXH128_hash_t h)
{
    char buf[33];
    std::snprintf(buf, sizeof(buf), "%016llx%016llx", static_cast<unsigned long long>(h.high64),
                  static_cast<unsigned long long>(h.low64));
    return buf;
}

// The checksum covers the manifest as serialized without its checksum
// field; nlohmann's objects keep keys sorted, so the text is canonical.
std::string checksum_of(json j)
{
    j.erase("checksum");
    std::string text = j.dump();
    return hex128(XXH3_128bits(text.data(), text.size()));
}

// Both hashes of a file from one read: SHA-256 (what the MAC covers) and
// xxh3-128 (damage, as the trace's checksums write it).
std::string sha256_and_xxh3(int fd, std::string& xxh3)
{
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), XXH3_freeState);
    if (!state || XXH3_128bits_reset(state.get()) != XXH_OK)
        throw std::system_error(ENOMEM, std::generic_category(), "hashing");
    std::string sha256 = sha256_of_fd(fd, [&](const char* p, size_t n) { XXH3_128bits_update(state.get(), p, n); });
    xxh3 = hex128(XXH3_128bits_digest(state.get()));
    return sha256;
}

// What the MAC covers: the manifest without its checksum and MAC.
std::string signed_text(json j)
{
    j.erase("checksum");
    j.erase("mac");
    return j.dump();
}

// Whether this user's key signed `j`; if not, why not.
std::string authenticity_problem(const json& j)
{
    if (!j.contains("mac") || !j["mac"].is_string())
        return "it is not signed (made by an older rewind, or not by rewind)";
    std::string why;
    std::optional<LandmarkKey> key = LandmarkKey::mine(&why);
    if (!key)
        return "it cannot be authenticated: " + why;
    if (!key->verifies(signed_text(j), j["mac"].get<std::string>()))
        return "it was not made by rewind on this machine for this user (its MAC does not match this user's "
               "landmark key)";
    return "";
}

std::string to_hex(const std::vector<uint8_t>& bytes)
{
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes.size() * 2);
    for (uint8_t b : bytes) {
        out.push_back(digits[b >> 4]);
        out.push_back(digits[b & 15]);
    }
    return out;
}

std::vector<uint8_t> from_hex(const std::string& text)
{
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        throw std::runtime_error(std::string("not a hex digit: '") + c + "'");
    };
    if (text.size() % 2)
        throw std::runtime_error("odd-length hex string");
    std::vector<uint8_t> out(text.size() / 2);
    for (size_t i = 0; i < out.size(); i++)
        out[i] = static_cast<uint8_t>(nibble(text[2 * i]) << 4 | nibble(text[2 * i + 1]));
    return out;
}

json stop_to_json(const StopInfo& s)
{
    return {{"kind", static_cast<int>(s.kind)},
            {"signal", s.signal},
            {"event", s.event},
            {"exit_code", s.exit_code},
            {"raw", s.raw}};
}

StopInfo stop_from_json(const json& j)
{
    int kind = j.at("kind").get<int>();
    if (kind < 0 || kind > static_cast<int>(StopInfo::Kind::GroupStop))
        throw std::runtime_error("unknown stop kind " + std::to_string(kind));
    StopInfo s{static_cast<StopInfo::Kind>(kind)};
    s.signal = j.at("signal").get<int>();
    s.event = j.at("event").get<int>();
    s.exit_code = j.at("exit_code").get<int>();
    s.raw = j.at("raw").get<int>();
    return s;
}

} // namespace

json task_copy_to_json(const ReplaySnapshot::TaskCopy& t, int copy)
{
    return {{"recorded_tid", t.recorded_tid},
            {"copy", copy},
            {"regs", t.regs.words},
            {"xstate", to_hex(t.state.xstate)},
            {"sigmask", t.state.sigmask},
            {"robust_head", t.state.robust_head},
            {"robust_len", t.state.robust_len},
            {"group", t.group},
            {"vm", t.vm},
            {"last_syscall_seq", t.last_syscall_seq},
            {"vfork_child", t.vfork_child},
            {"last_resume", static_cast<int>(t.last_resume)},
            {"child_settid", t.child_settid},
            {"clear_child_tid", t.clear_child_tid},
            {"alt_stack", t.alt_stack}};
}

json group_copy_to_json(const ReplaySnapshot::GroupCopy& g)
{
    json streams = json::array();
    for (const auto& [fd, stream] : g.fds.streams())
        streams.push_back({fd, stream});
    return {{"recorded_tgid", g.recorded_tgid}, {"streams", streams}};
}

json snapshot_state_to_json(const ReplaySnapshot& snap)
{
    json tasks = json::array();
    int copy = 0;
    for (const auto& t : snap.tasks)
        tasks.push_back(task_copy_to_json(t, t.pid ? copy++ : -1));
    json groups = json::array();
    for (const auto& g : snap.groups)
        groups.push_back(group_copy_to_json(g));
    json vms = json::array();
    for (const auto& v : snap.vms)
        vms.push_back({{"id", v.id}, {"syscall_insn", v.syscall_insn}});
    json finished = json::array();
    for (const auto& [tid, stop] : snap.finished)
        finished.push_back({{"tid", tid}, {"stop", stop_to_json(stop)}});
    return {{"tasks", tasks},
            {"groups", groups},
            {"vms", vms},
            {"finished", finished},
            {"cursor", snap.source.cursor},
            {"taken_ahead", snap.source.taken_ahead},
            {"initial_tid", snap.initial_tid},
            {"next_vm_id", snap.next_vm_id},
            {"warned_unechoed", snap.warned_unechoed}};
}

void snapshot_state_from_json(const json& j, const std::vector<pid_t>& copies, ReplaySnapshot& snap)
{
    try {
        for (const auto& g : j.at("groups")) {
            std::map<int, int> streams;
            for (const auto& s : g.at("streams"))
                streams[s.at(0).get<int>()] = s.at(1).get<int>();
            snap.groups.push_back({g.at("recorded_tgid").get<Tid>(), StdioFds::from_streams(std::move(streams))});
        }
        for (const auto& v : j.at("vms"))
            snap.vms.push_back({v.at("id").get<int>(), v.at("syscall_insn").get<uint64_t>()});
        for (const auto& t : j.at("tasks")) {
            ReplaySnapshot::TaskCopy c;
            c.recorded_tid = t.at("recorded_tid").get<Tid>();
            int copy = t.at("copy").get<int>();
            if (copy >= static_cast<int>(copies.size()))
                throw std::runtime_error("thread " + std::to_string(c.recorded_tid) + " names process copy " +
                                         std::to_string(copy) + " of " + std::to_string(copies.size()));
            c.pid = copy >= 0 ? copies[copy] : 0;
            auto words = t.at("regs").get<std::vector<uint64_t>>();
            if (words.size() != Registers::kCount)
                throw std::runtime_error("thread " + std::to_string(c.recorded_tid) + " has " +
                                         std::to_string(words.size()) + " registers");
            std::copy(words.begin(), words.end(), c.regs.words.begin());
            c.state.xstate = from_hex(t.at("xstate").get<std::string>());
            c.state.sigmask = t.at("sigmask").get<uint64_t>();
            c.state.robust_head = t.at("robust_head").get<uint64_t>();
            c.state.robust_len = t.at("robust_len").get<uint64_t>();
            c.group = t.at("group").get<size_t>();
            c.vm = t.at("vm").get<size_t>();
            if (c.group >= snap.groups.size() || c.vm >= snap.vms.size())
                throw std::runtime_error("thread " + std::to_string(c.recorded_tid) +
                                         " names a process or address space the landmark does not have");
            c.last_syscall_seq = t.at("last_syscall_seq").get<uint64_t>();
            c.vfork_child = t.at("vfork_child").get<Tid>();
            int resume = t.at("last_resume").get<int>();
            if (resume < 0 || resume > static_cast<int>(Resume::Cont))
                throw std::runtime_error("unknown resume mode " + std::to_string(resume));
            c.last_resume = static_cast<Resume>(resume);
            c.child_settid = t.at("child_settid").get<uint64_t>();
            c.clear_child_tid = t.at("clear_child_tid").get<uint64_t>();
            c.alt_stack = t.at("alt_stack").get<bool>();
            snap.tasks.push_back(std::move(c));
        }
        for (const auto& f : j.at("finished"))
            snap.finished[f.at("tid").get<Tid>()] = stop_from_json(f.at("stop"));
        snap.source.cursor = j.at("cursor").get<uint64_t>();
        snap.source.taken_ahead = j.at("taken_ahead").get<std::set<uint64_t>>();
        snap.initial_tid = j.at("initial_tid").get<Tid>();
        snap.next_vm_id = j.at("next_vm_id").get<int>();
        snap.warned_unechoed = j.at("warned_unechoed").get<bool>();
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("the replayer state is malformed: ") + e.what());
    }
}

json LandmarkManifest::to_json(const LandmarkKey* key) const
{
    json mounts_j = json::array();
    for (const auto& m : mounts)
        mounts_j.push_back({{"target", m.target}, {"content_hash", m.content_hash}});
    json files_j = json::array();
    for (const auto& f : files)
        files_j.push_back({{"path", f.path}, {"size", f.size}, {"xxh3", f.xxh3}, {"sha256", f.sha256}});
    json j = {{"format", kFormat},
              {"position", position.serialize()},
              {"event", position.event},
              {"trace_events", trace_events},
              {"trace_id", trace_id},
              {"mounts", mounts_j},
              {"processes", processes},
              {"files", files_j},
              {"state", state},
              {"dump_seconds", dump_seconds},
              {"image_bytes", image_bytes}};
    if (key)
        j["mac"] = key->sign(signed_text(j));
    j["checksum"] = checksum_of(j);
    return j;
}

LandmarkManifest LandmarkManifest::from_json(const json& j)
{
    if (!j.is_object())
        throw std::runtime_error("the manifest is not a JSON object");
    if (!j.contains("checksum") || !j["checksum"].is_string())
        throw std::runtime_error("the manifest has no checksum");
    if (std::string want = j["checksum"].get<std::string>(), got = checksum_of(j); want != got)
        throw std::runtime_error("the manifest's checksum does not match its content (" + got + ", recorded " + want +
                                 ")");
    LandmarkManifest m;
    try {
        if (int format = j.at("format").get<int>(); format != kFormat)
            throw std::runtime_error("manifest format " + std::to_string(format) + " is not " +
                                     std::to_string(kFormat));
        auto pos = perfclock::Position::parse(j.at("position").get<std::string>());
        if (!pos)
            throw std::runtime_error("the position '" + j.at("position").get<std::string>() + "' is malformed");
        m.position = *pos;
        m.trace_events = j.at("trace_events").get<uint64_t>();
        m.trace_id = j.at("trace_id").get<std::string>();
        for (const auto& x : j.at("mounts"))
            m.mounts.push_back({x.at("target").get<std::string>(), x.at("content_hash").get<std::string>()});
        m.processes = j.at("processes").get<std::vector<std::string>>();
        for (const auto& x : j.at("files"))
            m.files.push_back({x.at("path").get<std::string>(), x.at("size").get<uint64_t>(),
                               x.at("xxh3").get<std::string>(), x.value("sha256", std::string())});
        m.state = j.at("state");
        m.dump_seconds = j.at("dump_seconds").get<double>();
        m.image_bytes = j.at("image_bytes").get<uint64_t>();
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("the manifest is malformed: ") + e.what());
    }
    for (const auto& f : m.files)
        if (f.path.empty() || f.path[0] == '/' || f.path.find("..") != std::string::npos)
            throw std::runtime_error("the manifest names a file outside the landmark: " + f.path);
    for (const auto& p : m.processes)
        if (p.empty() || p.find('/') != std::string::npos || p == "." || p == "..")
            throw std::runtime_error("the manifest names a bad image directory: " + p);
    m.not_authentic = authenticity_problem(j);
    m.authentic = m.not_authentic.empty();
    if (m.authentic)
        for (const auto& f : m.files)
            if (f.sha256.size() != 64)
                throw std::runtime_error("the signed manifest has no SHA-256 of " + f.path);
    return m;
}

LandmarkFile describe_file(const fs::path& dir, const std::string& relative)
{
    fs::path p = dir / relative;
    UniqueFd fd(::open(p.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        throw std::system_error(errno, std::generic_category(), p.string());
    LandmarkFile f{relative, fs::file_size(p), "", ""};
    f.sha256 = sha256_and_xxh3(fd.get(), f.xxh3);
    return f;
}

void write_manifest(const fs::path& dir, const LandmarkManifest& m)
{
    LandmarkKey key = LandmarkKey::mine_or_new();
    std::string text = m.to_json(&key).dump(1) + "\n";
    fs::path tmp = dir / (std::string(kManifestName) + ".tmp");
    {
        std::ofstream out(tmp);
        out << text;
        if (!out)
            throw std::runtime_error("cannot write " + tmp.string());
    }
    fs::rename(tmp, dir / kManifestName);
}

LandmarkManifest read_manifest(const fs::path& dir)
{
    // Part of the trace: opened as its other files are (trace_file.h).
    UniqueFd fd = open_trace_file(dir, kManifestName, true);
    if (!fd)
        throw std::runtime_error("its manifest is missing");
    json j = json::parse(read_whole_trace_file(fd.get(), (dir / kManifestName).string(), 16 << 20), nullptr, false);
    if (j.is_discarded())
        throw std::runtime_error("its manifest is not valid JSON");
    return LandmarkManifest::from_json(j);
}

std::vector<std::string> verify_files(const fs::path& dir, const LandmarkManifest& m)
{
    std::vector<std::string> problems;
    for (const auto& f : m.files) {
        UniqueFd fd;
        try {
            fd = open_trace_file(dir, f.path, true);
        } catch (const TraceFileError& e) {
            problems.push_back(f.path + " cannot be used: " + e.what());
            continue;
        }
        struct stat st {};
        if (!fd || ::fstat(fd.get(), &st) != 0) {
            problems.push_back(f.path + " is missing");
            continue;
        }
        uint64_t size = static_cast<uint64_t>(st.st_size);
        if (size != f.size) {
            problems.push_back(f.path + " has " + std::to_string(size) + " bytes, not " + std::to_string(f.size));
            continue;
        }
        try {
            std::string xxh3;
            std::string sha256 = sha256_and_xxh3(fd.get(), xxh3);
            if (xxh3 != f.xxh3 || (!f.sha256.empty() && sha256 != f.sha256))
                problems.push_back(f.path + " does not match its checksum");
        } catch (const std::system_error& e) {
            problems.push_back(f.path + " cannot be read: " + e.what());
        }
    }
    return problems;
}

} // namespace rw::replay
