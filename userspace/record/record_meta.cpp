#include "record_meta.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "process_image.h"
#include "event_stream.h"
#include "init_signals.h"
#include "system_info.h"
#include "trace_dir.h"
#include "tsc.h"
#include "version.h"

namespace rw {
namespace {

std::string read_proc_file(pid_t pid, const char* name)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/" + name, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> split_nuls(const std::string& s)
{
    std::vector<std::string> out;
    size_t at = 0;
    while (at < s.size()) {
        size_t end = s.find('\0', at);
        if (end == std::string::npos)
            end = s.size();
        out.push_back(s.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

} // namespace

TraceMeta make_meta(const std::string& program, const std::vector<std::string>& argv,
                    const std::vector<std::string>& envp, uint32_t ring_bytes)
{
    TraceMeta m;
    m.format_version = kTraceFormatVersion;
    m.rewind_version = kRewindVersion;
    m.created_unix_ns = unix_time_ns();
    m.created = iso_time_utc(m.created_unix_ns);
    m.program = program;
    m.argv = argv;
    m.envp = envp;
    std::error_code ec;
    m.cwd = std::filesystem::current_path(ec).string();
    m.uid = getuid();
    m.gid = getgid();
    m.euid = geteuid();
    m.egid = getegid();
    m.hostname = host_name();
    KernelInfo k = kernel_info();
    m.kernel_release = k.release;
    m.kernel_version = k.version;
    CpuInfo c = cpu_info();
    m.cpu_vendor = c.vendor;
    m.cpu_model = c.model_name;
    m.cpu_family = c.family;
    m.cpu_model_id = c.model;
    m.cpu_stepping = c.stepping;
    m.cpu_flags = c.flags;
    m.clock_kind = "software";
    m.clock_detail = "event index + hardware-breakpoint counters + single-step";
    m.ring_bytes = ring_bytes;
    m.rlimits = current_rlimits();
    m.signals = SignalState::initial();
    m.notes = {"address space randomisation disabled",
               tsc_trap_works() ? "rdtsc/rdtscp trapped and recorded"
                                : "rdtsc/rdtscp NOT trapped (this machine ignores PR_SET_TSC): values the program "
                                  "read from the TSC are not in the trace",
               "vDSO time calls patched into real syscalls", "rseq refused with ENOSYS"};
    return m;
}

TraceMeta meta_of_running(pid_t pid, const RecordOptions& options)
{
    std::error_code ec;
    std::string exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
    TraceMeta m = make_meta(exe, split_nuls(read_proc_file(pid, "cmdline")), split_nuls(read_proc_file(pid, "environ")),
                            options.ring_bytes);
    options.scrub_env.apply(m.envp);
    m.scrubbed_env.assign(options.scrub_env.names().begin(), options.scrub_env.names().end());
    m.cwd = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec).string();
    auto ids = [&](const char* field, uint32_t& real, uint32_t& effective) {
        if (auto v = proc_status_number(pid, field))
            real = effective = static_cast<uint32_t>(*v);
        std::istringstream in(read_proc_file(pid, "status"));
        std::string line;
        while (std::getline(in, line))
            if (line.rfind(std::string(field) + ":", 0) == 0) {
                std::istringstream f(line.substr(std::strlen(field) + 1));
                f >> real >> effective;
            }
    };
    ids("Uid", m.uid, m.euid);
    ids("Gid", m.gid, m.egid);
    m.rlimits.clear();
    for (int r = 0; r < RLIM_NLIMITS; r++) {
        struct rlimit l {};
        if (prlimit(pid, static_cast<__rlimit_resource>(r), nullptr, &l) == 0)
            m.rlimits.push_back({r, l.rlim_cur, l.rlim_max});
    }
    m.notes.back() = "rseq registrations undone while recorded, refused with ENOSYS";
    m.notes.push_back("attached to running process " + std::to_string(pid));
    TraceMeta::Attached a;
    a.pid = pid;
    a.executable = exe;
    std::string auxv = read_proc_file(pid, "auxv");
    a.auxv.resize(auxv.size() / sizeof(uint64_t));
    std::memcpy(a.auxv.data(), auxv.data(), a.auxv.size() * sizeof(uint64_t));
    a.start_image = trace_files::kStartImage;
    m.attached = a;
    return m;
}

TraceMeta::Attached::Process running_process(pid_t pid, pid_t parent)
{
    TraceMeta::Attached::Process p;
    p.pid = pid;
    p.parent = parent;
    p.argv = split_nuls(read_proc_file(pid, "cmdline"));
    std::error_code ec;
    p.executable = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec).string();
    std::string auxv = read_proc_file(pid, "auxv");
    p.auxv.resize(auxv.size() / sizeof(uint64_t));
    std::memcpy(p.auxv.data(), auxv.data(), p.auxv.size() * sizeof(uint64_t));
    return p;
}

} // namespace rw
