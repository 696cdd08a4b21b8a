#include "trace_meta.h"

#include "json_bytes.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>
#include <system_error>

#include "bytes.h"
#include "trace_file.h"

namespace rw {
namespace {

using nlohmann::json;

// Writes via a temporary file and rename, so a reader never sees half a file.
void write_file_atomically(const std::filesystem::path& path, const std::string& content)
{
    auto tmp = path;
    tmp += ".tmp";
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        throw std::system_error(errno, std::generic_category(), "creating " + tmp.string());
    size_t done = 0;
    while (done < content.size()) {
        ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            throw std::system_error(err, std::generic_category(), "writing " + tmp.string());
        }
        done += static_cast<size_t>(n);
    }
    ::fsync(fd);
    ::close(fd);
    std::filesystem::rename(tmp, path);
}

// meta.json and end.json are a few KiB; argv and envp are bounded by the
// kernel's limit on an exec's arguments, far below this.
constexpr size_t kMaxJsonBytes = 64 << 20;

// Parses a JSON file of the trace. What the file holds never reaches a
// message: were it a link to a secret, the parser's error would quote it.
json parse_trace_json(const std::string& text, const std::filesystem::path& shown)
{
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        throw FormatError(shown.string() + " is not valid JSON (a syntax error at byte " + std::to_string(e.byte) +
                          ")");
    } catch (const json::exception& e) {
        throw FormatError(shown.string() + " is not valid JSON (error " + std::to_string(e.id) + ")");
    }
}

// nullopt when the file is absent and may be.
std::optional<json> read_json(const std::filesystem::path& dir, const char* name, bool may_be_missing)
{
    UniqueFd fd = open_trace_file(dir, name, may_be_missing);
    if (!fd)
        return std::nullopt;
    std::filesystem::path shown = dir / name;
    return parse_trace_json(read_whole_trace_file(fd.get(), shown.string(), kMaxJsonBytes), shown);
}

} // namespace

std::vector<TraceMeta::Rlimit> current_rlimits()
{
    std::vector<TraceMeta::Rlimit> out;
    for (int r = 0; r < RLIM_NLIMITS; r++) {
        struct rlimit l {};
        if (getrlimit(static_cast<__rlimit_resource>(r), &l) == 0)
            out.push_back({r, l.rlim_cur, l.rlim_max});
    }
    return out;
}

uint64_t unix_time_ns()
{
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

std::string iso_time_utc(uint64_t unix_ns)
{
    time_t secs = static_cast<time_t>(unix_ns / 1000000000);
    struct tm tm {};
    gmtime_r(&secs, &tm);
    char buf[64];
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

ExitStatus ExitStatus::from_wait_status(int status)
{
    ExitStatus s;
    s.wait_status = status;
    if (WIFSIGNALED(status)) {
        s.signaled = true;
        s.signal = WTERMSIG(status);
        s.core_dumped = WCOREDUMP(status);
    } else {
        s.code = WEXITSTATUS(status);
    }
    return s;
}

std::string ExitStatus::describe() const
{
    if (signaled)
        return std::string("killed by signal ") + std::to_string(signal) + " (" + strsignal(signal) + ")" +
               (core_dumped ? ", core dumped" : "");
    return "exited with status " + std::to_string(code);
}

void write_meta(const std::filesystem::path& dir, const TraceMeta& m)
{
    json j = {
        {"format_version", m.format_version},
        {"rewind_version", m.rewind_version},
        {"created", m.created},
        {"created_unix_ns", m.created_unix_ns},
        {"program", bytes_to_json(m.program)},
        {"argv", bytes_list_to_json(m.argv)},
        {"envp", bytes_list_to_json(m.envp)},
        {"cwd", bytes_to_json(m.cwd)},
        {"uid", m.uid},
        {"gid", m.gid},
        {"euid", m.euid},
        {"egid", m.egid},
        {"hostname", m.hostname},
        {"kernel", {{"release", m.kernel_release}, {"version", m.kernel_version}}},
        {"cpu",
         {{"vendor", m.cpu_vendor},
          {"model", m.cpu_model},
          {"family", m.cpu_family},
          {"model_id", m.cpu_model_id},
          {"stepping", m.cpu_stepping},
          {"flags", m.cpu_flags}}},
        {"clock", {{"kind", m.clock_kind}, {"detail", m.clock_detail}}},
        {"ring_bytes", m.ring_bytes},
        {"notes", m.notes},
    };
    json limits = json::array();
    for (const auto& r : m.rlimits)
        limits.push_back({r.resource, r.cur, r.max});
    j["rlimits"] = limits;
    j["signals"] = {{"blocked", m.signals.blocked}, {"ignored", m.signals.ignored}};
    if (!m.scrubbed_env.empty())
        j["scrubbed_env"] = m.scrubbed_env;
    j["thread_mode"] = m.thread_mode;
    if (m.attached) {
        auto process = [](const auto& p) {
            json maps = json::array();
            for (const auto& x : p.mappings)
                maps.push_back({{"start", x.start},
                                {"end", x.end},
                                {"perms", x.perms},
                                {"offset", x.offset},
                                {"path", bytes_to_json(x.path)},
                                {"content_hash", x.content_hash}});
            return json{{"pid", p.pid},
                        {"executable", p.executable},
                        {"auxv", p.auxv},
                        {"threads", p.threads},
                        {"mappings", maps}};
        };
        json a = process(*m.attached);
        a["pause_seconds"] = m.attached->pause_seconds;
        a["start_image"] = m.attached->start_image;
        if (!m.attached->descendants.empty()) {
            a["descendants"] = json::array();
            for (const auto& d : m.attached->descendants) {
                a["descendants"].push_back(process(d));
                a["descendants"].back()["parent"] = d.parent;
                a["descendants"].back()["argv"] = bytes_list_to_json(d.argv);
            }
        }
        j["attached"] = a;
    }
    write_file_atomically(dir / "meta.json", dump_for_display(j, 2) + "\n");
}

TraceMeta read_meta(const std::filesystem::path& dir)
{
    json j = *read_json(dir, "meta.json", false);
    TraceMeta m;
    try {
        m.format_version = j.at("format_version").get<uint32_t>();
        m.rewind_version = j.value("rewind_version", "");
        m.created = j.value("created", "");
        m.created_unix_ns = j.value("created_unix_ns", uint64_t(0));
        m.program = j.contains("program") ? bytes_from_json(j["program"]) : "";
        m.argv = j.contains("argv") ? bytes_list_from_json(j["argv"]) : std::vector<std::string>{};
        m.envp = j.contains("envp") ? bytes_list_from_json(j["envp"]) : std::vector<std::string>{};
        m.cwd = j.contains("cwd") ? bytes_from_json(j["cwd"]) : "";
        m.uid = j.value("uid", 0u);
        m.gid = j.value("gid", 0u);
        m.euid = j.value("euid", 0u);
        m.egid = j.value("egid", 0u);
        m.hostname = j.value("hostname", "");
        if (j.contains("kernel")) {
            m.kernel_release = j["kernel"].value("release", "");
            m.kernel_version = j["kernel"].value("version", "");
        }
        if (j.contains("cpu")) {
            const auto& c = j["cpu"];
            m.cpu_vendor = c.value("vendor", "");
            m.cpu_model = c.value("model", "");
            m.cpu_family = c.value("family", 0);
            m.cpu_model_id = c.value("model_id", 0);
            m.cpu_stepping = c.value("stepping", 0);
            m.cpu_flags = c.value("flags", std::vector<std::string>{});
        }
        if (j.contains("clock")) {
            m.clock_kind = j["clock"].value("kind", "");
            m.clock_detail = j["clock"].value("detail", "");
        }
        m.ring_bytes = j.value("ring_bytes", uint64_t(0));
        m.notes = j.value("notes", std::vector<std::string>{});
        for (const auto& r : j.value("rlimits", json::array()))
            m.rlimits.push_back({r.at(0).get<int>(), r.at(1).get<uint64_t>(), r.at(2).get<uint64_t>()});
        m.scrubbed_env = j.value("scrubbed_env", std::vector<std::string>{});
        m.thread_mode = j.value("thread_mode", std::string("serialized"));
        if (j.contains("attached")) {
            const auto& a = j["attached"];
            TraceMeta::Attached at;
            auto process = [](const json& x, auto& p) {
                p.pid = x.at("pid").get<int>();
                p.executable = x.value("executable", "");
                p.auxv = x.value("auxv", std::vector<uint64_t>{});
                p.threads = x.value("threads", uint64_t(0));
                for (const auto& y : x.value("mappings", json::array()))
                    p.mappings.push_back({y.at("start").get<uint64_t>(), y.at("end").get<uint64_t>(),
                                          y.at("perms").get<std::string>(), y.at("offset").get<uint64_t>(),
                                          bytes_from_json(y.at("path")), y.value("content_hash", "")});
            };
            process(a, at);
            at.pause_seconds = a.value("pause_seconds", 0.0);
            at.start_image = a.value("start_image", "");
            for (const auto& x : a.value("descendants", json::array())) {
                TraceMeta::Attached::Process d;
                process(x, d);
                d.parent = x.at("parent").get<int>();
                d.argv = x.contains("argv") ? bytes_list_from_json(x["argv"]) : std::vector<std::string>{};
                at.descendants.push_back(std::move(d));
            }
            m.attached = at;
        }
        if (j.contains("signals")) {
            m.signals.blocked = j["signals"].value("blocked", uint64_t(0));
            m.signals.ignored = j["signals"].value("ignored", uint64_t(0));
        }
    } catch (const json::exception& e) {
        throw FormatError((dir / "meta.json").string() + ": " + e.what());
    }
    return m;
}

void write_end(const std::filesystem::path& dir, const TraceEnd& e)
{
    json j = {
        {"ended", e.ended},
        {"duration_ns", e.duration_ns},
        {"exit",
         {{"signaled", e.exit.signaled},
          {"code", e.exit.code},
          {"signal", e.exit.signal},
          {"core_dumped", e.exit.core_dumped},
          {"wait_status", e.exit.wait_status}}},
        {"complete", e.complete},
        {"problems", e.problems},
        {"events", e.events},
        {"memory_bytes", e.memory_bytes},
        {"stream_bytes", e.stream_bytes},
        {"stalls", e.stalls},
        {"kernel_hz", e.kernel_hz},
        {"processes", e.processes},
        {"threads", e.threads},
        {"syscall_counts", e.syscall_counts},
    };
    if (e.disk_full_at)
        j["disk_full_at_event"] = *e.disk_full_at;
    if (e.refusal)
        j["refusal"] = {{"event", e.refusal->event}, {"tid", e.refusal->tid}, {"why", e.refusal->why}};
    if (e.killed_at_exit)
        j["killed_at_exit"] = e.killed_at_exit;
    if (e.detached)
        j["detached"] = {{"reason", e.detach_reason}};
    if (e.window)
        j["window"] = {{"size", e.window->size},
                       {"recorded_ns", e.window->recorded_ns},
                       {"events_dropped", e.window->events_dropped},
                       {"images_taken", e.window->images_taken},
                       {"images_missed", e.window->images_missed}};
    if (!e.files_written_while_mapped.empty()) {
        json files = json::array();
        for (const auto& f : e.files_written_while_mapped)
            files.push_back({{"dev", f.dev}, {"ino", f.ino}});
        j["files_written_while_mapped"] = files;
    }
    if (e.files_mapped_shared_writable) {
        json files = json::array();
        for (const auto& f : *e.files_mapped_shared_writable)
            files.push_back({{"dev", f.dev}, {"ino", f.ino}});
        j["files_mapped_shared_writable"] = files;
    }
    write_file_atomically(dir / "end.json", dump_for_display(j, 2) + "\n"); // (problems are text)
}

std::optional<TraceEnd> read_end(const std::filesystem::path& dir)
{
    std::optional<json> read = read_json(dir, "end.json", true);
    if (!read)
        return std::nullopt;
    const json& j = *read;
    TraceEnd e;
    try {
        e.ended = j.value("ended", "");
        e.duration_ns = j.value("duration_ns", uint64_t(0));
        const auto& x = j.at("exit");
        e.exit.signaled = x.value("signaled", false);
        e.exit.code = x.value("code", 0);
        e.exit.signal = x.value("signal", 0);
        e.exit.core_dumped = x.value("core_dumped", false);
        e.exit.wait_status = x.value("wait_status", 0);
        e.complete = j.value("complete", false);
        e.problems = j.value("problems", std::vector<std::string>{});
        e.events = j.value("events", uint64_t(0));
        e.memory_bytes = j.value("memory_bytes", uint64_t(0));
        e.stream_bytes = j.value("stream_bytes", uint64_t(0));
        e.stalls = j.value("stalls", uint64_t(0));
        e.kernel_hz = j.value("kernel_hz", 0u);
        e.processes = j.value("processes", uint64_t(0));
        e.threads = j.value("threads", uint64_t(0));
        e.syscall_counts = j.value("syscall_counts", std::map<std::string, uint64_t>{});
        if (j.contains("disk_full_at_event"))
            e.disk_full_at = j["disk_full_at_event"].get<uint64_t>();
        if (j.contains("refusal")) {
            const auto& r = j.at("refusal");
            e.refusal = RecordRefusal{r.at("event").get<uint64_t>(), r.at("tid").get<int32_t>(),
                                      r.at("why").get<std::string>()};
        }
        e.killed_at_exit = j.value("killed_at_exit", uint64_t(0));
        if (j.contains("window") && j["window"].is_object()) {
            const auto& w = j["window"];
            TraceEnd::Window win;
            win.size = w.value("size", "");
            win.recorded_ns = w.value("recorded_ns", uint64_t{0});
            win.events_dropped = w.value("events_dropped", uint64_t{0});
            win.images_taken = w.value("images_taken", uint64_t{0});
            win.images_missed = w.value("images_missed", std::map<std::string, uint64_t>{});
            e.window = win;
        }
        if (j.contains("detached")) {
            e.detached = true;
            e.detach_reason = j["detached"].value("reason", "");
        }
        if (j.contains("files_written_while_mapped"))
            for (const auto& f : j.at("files_written_while_mapped"))
                e.files_written_while_mapped.push_back({f.at("dev").get<uint64_t>(), f.at("ino").get<uint64_t>()});
        if (j.contains("files_mapped_shared_writable")) {
            e.files_mapped_shared_writable.emplace();
            for (const auto& f : j.at("files_mapped_shared_writable"))
                e.files_mapped_shared_writable->push_back({f.at("dev").get<uint64_t>(), f.at("ino").get<uint64_t>()});
        }
    } catch (const json::exception& ex) {
        throw FormatError((dir / "end.json").string() + ": " + ex.what());
    }
    return e;
}

} // namespace rw
