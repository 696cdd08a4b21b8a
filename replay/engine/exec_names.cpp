#include "exec_names.h"

#include <fcntl.h>
#include <sys/syscall.h>

#include <cctype>
#include <filesystem>
#include <string_view>
#include <vector>

namespace rw::replay {
namespace fs = std::filesystem;

std::optional<std::string> exec_name(long nr, int dirfd, const std::string& path, uint64_t flags)
{
    // fs/exec.c: alloc_bprm.
    if (nr != SYS_execveat || path.starts_with("/") || dirfd == AT_FDCWD)
        return path;
    if (path.empty())
        return (flags & AT_EMPTY_PATH) ? std::optional("/dev/fd/" + std::to_string(dirfd)) : std::nullopt;
    return "/dev/fd/" + std::to_string(dirfd) + "/" + path;
}

std::optional<DescriptorRoute> descriptor_route(const std::string& name)
{
    for (const char* prefix : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"}) {
        std::string_view p(prefix);
        if (!name.starts_with(p))
            continue;
        size_t end = p.size();
        while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end])))
            end++;
        if (end == p.size() || end - p.size() > 9 || (end < name.size() && name[end] != '/'))
            return std::nullopt;
        DescriptorRoute r;
        r.fd = std::stoi(name.substr(p.size(), end - p.size()));
        if (end < name.size())
            r.rest = name.substr(end + 1);
        return r;
    }
    return std::nullopt;
}

std::string live_path(const std::string& maps_path)
{
    constexpr std::string_view kDeleted = " (deleted)";
    if (maps_path.ends_with(kDeleted))
        return maps_path.substr(0, maps_path.size() - kDeleted.size());
    return maps_path;
}

std::optional<std::string> memfd_name(const std::string& maps_path)
{
    constexpr std::string_view kPrefix = "/memfd:";
    if (!maps_path.starts_with(kPrefix) || !maps_path.ends_with(" (deleted)"))
        return std::nullopt;
    return live_path(maps_path).substr(kPrefix.size());
}

bool bind_mountable(const std::string& maps_path)
{
    return maps_path.starts_with("/") && !memfd_name(maps_path) && !detached_mount_root(maps_path);
}

std::optional<std::string> directory_reaching(const std::string& relative, const std::string& image)
{
    fs::path rel = fs::path(relative).lexically_normal();
    fs::path img = fs::path(image).lexically_normal();
    if (rel.empty() || rel.is_absolute() || !img.is_absolute() || rel == ".")
        return std::nullopt;
    for (const auto& part : rel)
        if (part == "..")
            return std::nullopt;
    std::vector<fs::path> parts(img.begin(), img.end()), tail(rel.begin(), rel.end());
    if (tail.size() >= parts.size())
        return std::nullopt;
    for (size_t i = 0; i < tail.size(); i++)
        if (parts[parts.size() - tail.size() + i] != tail[i])
            return std::nullopt;
    fs::path dir;
    for (size_t i = 0; i + tail.size() < parts.size(); i++)
        dir /= parts[i];
    return dir.string();
}

} // namespace rw::replay
