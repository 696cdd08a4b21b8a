#include "trace_dir.h"

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

namespace rw {
namespace fs = std::filesystem;

fs::path traces_root()
{
    if (const char* dir = std::getenv("REWIND_DIR"); dir && *dir)
        return dir;
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
        if (struct passwd* pw = getpwuid(getuid()))
            home = pw->pw_dir;
    }
    if (!home)
        throw TraceDirError("cannot find a home directory; set REWIND_DIR");
    return fs::path(home) / ".local" / "share" / "rewind";
}

namespace {

void make_private_dir(const fs::path& dir)
{
    if (::mkdir(dir.c_str(), 0700) != 0)
        throw std::system_error(errno, std::generic_category(), "creating " + dir.string());
    ::chmod(dir.c_str(), 0700); // whatever the umask
}

// Only a directory rewind creates is made private: an existing one (say
// REWIND_DIR=/tmp) keeps its mode; each trace in it is private anyway.
void make_root(const fs::path& root)
{
    std::error_code ec;
    if (fs::is_directory(root, ec))
        return;
    fs::create_directories(root.parent_path(), ec);
    if (::mkdir(root.c_str(), 0700) != 0 && errno != EEXIST)
        throw TraceDirError("cannot create the trace directory " + root.string() + ": " + strerror(errno));
    ::chmod(root.c_str(), 0700); // whatever the umask
}

std::string sanitize(std::string name)
{
    for (char& c : name)
        if (!(isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
            c = '_';
    if (name.empty() || name == "latest" || name[0] == '.')
        name = "trace-" + name;
    return name;
}

} // namespace

fs::path create_trace_dir(const std::optional<fs::path>& output, const std::string& program_name)
{
    fs::path dir;
    if (output) {
        dir = fs::absolute(*output);
        std::error_code ec;
        if (fs::exists(dir, ec)) {
            if (!fs::is_directory(dir) || !fs::is_empty(dir))
                throw TraceDirError("--output " + dir.string() + " exists and is not an empty directory");
        } else {
            fs::create_directories(dir.parent_path(), ec);
            make_private_dir(dir);
        }
    } else {
        fs::path root = traces_root();
        make_root(root);
        std::string base = sanitize(program_name);
        for (int n = 0;; n++) {
            dir = root / (base + "-" + std::to_string(n));
            if (::mkdir(dir.c_str(), 0700) == 0)
                break;
            if (errno != EEXIST)
                throw std::system_error(errno, std::generic_category(), "creating " + dir.string());
        }
        ::chmod(dir.c_str(), 0700);
    }
    make_private_dir(dir / trace_files::kFiles);
    return dir;
}

void update_latest_link(const fs::path& trace)
{
    fs::path root = traces_root();
    std::error_code ec;
    if (fs::weakly_canonical(trace.parent_path(), ec) != fs::weakly_canonical(root, ec))
        return;
    fs::path tmp = root / (".latest." + std::to_string(getpid()));
    fs::remove(tmp, ec);
    fs::create_symlink(trace.filename(), tmp, ec);
    if (!ec)
        fs::rename(tmp, root / "latest", ec);
}

bool looks_like_trace(const fs::path& dir)
{
    // Present, whatever they are: a link or a FIFO in their place is
    // refused when opened (trace_file.h), saying so, rather than called
    // "not a trace".
    std::error_code ec;
    return fs::exists(fs::symlink_status(dir / trace_files::kMeta, ec)) &&
           fs::exists(fs::symlink_status(dir / trace_files::kEvents, ec));
}

void require_trace(const fs::path& dir)
{
    if (looks_like_trace(dir))
        return;
    // Unreadable is not the same as not a trace: say whose it is.
    for (const fs::path& p : {dir, dir / trace_files::kMeta, dir / trace_files::kEvents}) {
        struct stat st {};
        if (::stat(p.c_str(), &st) == 0 && ::access(p.c_str(), fs::is_directory(p) ? R_OK | X_OK : R_OK) != 0 &&
            errno == EACCES) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
            std::string owner = std::to_string(st.st_uid);
            if (struct passwd* pw = getpwuid(st.st_uid))
                owner = pw->pw_name;
            throw TraceDirError("cannot read the trace " + dir.string() + ": permission denied (" + p.string() +
                                " belongs to " + owner + ", mode " + mode + ")");
        }
    }
    throw TraceDirError(dir.string() + " is not a rewind trace (no meta.json and events)");
}

fs::path resolve_trace(const std::optional<std::string>& arg)
{
    fs::path root = traces_root();
    std::string name = arg.value_or("latest");
    std::error_code ec;
    if (arg && (arg->find('/') != std::string::npos || fs::is_directory(*arg, ec))) {
        fs::path p = fs::absolute(*arg);
        if (!fs::is_directory(p, ec))
            throw TraceDirError("no trace at " + p.string());
        require_trace(p);
        return p;
    }
    fs::path p = root / name;
    if (name == "latest" && !fs::exists(p, ec))
        throw TraceDirError("no recordings yet in " + root.string() + " (run `rewind record -- PROGRAM` first)");
    if (!fs::is_directory(p, ec))
        throw TraceDirError("no trace named '" + name + "' in " + root.string() + " (see `rewind ls`)");
    p = fs::canonical(p, ec);
    require_trace(p);
    return p;
}

namespace {

// Field 22 of /proc/PID/stat: when the process started, in clock ticks.
std::string start_time_of(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    size_t close = stat.rfind(')');
    if (close == std::string::npos)
        return "";
    std::istringstream fields(stat.substr(close + 2));
    std::string field;
    // A process that has ended but is not reaped yet (its parent has not
    // waited for it) is no longer there to speak of.
    if (!(fields >> field) || field == "Z" || field == "X")
        return "";
    for (int i = 4; i <= 22 && fields >> field; i++) {
    }
    return field;
}

} // namespace

void note_recorder(const fs::path& trace)
{
    // Whole or not at all: `rewind stop` may read it at once.
    fs::path partial = trace / (std::string(trace_files::kRecorder) + ".partial");
    {
        std::ofstream out(partial);
        out << getpid() << " " << start_time_of(getpid()) << "\n";
    }
    fs::rename(partial, trace / trace_files::kRecorder);
}

void forget_recorder(const fs::path& trace)
{
    std::error_code ec;
    fs::remove(trace / trace_files::kRecorder, ec);
}

std::optional<pid_t> recorder_of(const fs::path& trace)
{
    std::ifstream in(trace / trace_files::kRecorder);
    pid_t pid = 0;
    std::string started;
    if (!(in >> pid >> started) || pid <= 0 || start_time_of(pid) != started)
        return std::nullopt;
    return pid;
}

std::vector<TraceListing> list_traces()
{
    std::vector<TraceListing> out;
    fs::path root = traces_root();
    std::error_code ec;
    if (!fs::is_directory(root, ec))
        return out;
    for (const auto& entry : fs::directory_iterator(root, ec)) {
        if (entry.is_symlink() || !entry.is_directory())
            continue;
        if (looks_like_trace(entry.path()))
            out.push_back({entry.path().filename().string(), entry.path()});
    }
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
        std::error_code e1, e2;
        return fs::last_write_time(a.path / trace_files::kMeta, e1) <
               fs::last_write_time(b.path / trace_files::kMeta, e2);
    });
    return out;
}

} // namespace rw
