#include "text.h"
#include "gdb_host_files.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "event_stream.h"
#include "gdb_connection.h"
#include "packet_fields.h"
#include "trace.h"

namespace rw::replay {
namespace {

std::string canonical(const std::string& path)
{
    std::error_code ec;
    auto c = std::filesystem::weakly_canonical(path, ec);
    return ec ? path : c.string();
}

std::string strip_deleted(std::string p)
{
    if (auto pos = p.rfind(" (deleted)"); pos != std::string::npos && pos + 10 == p.size())
        p.resize(pos);
    return p;
}

std::string error_reply(int err)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "F-1,%x", err);
    return buf;
}

// gdb's struct stat for host I/O: big-endian, fixed layout.
std::string fio_stat(const struct stat& st)
{
    std::string out;
    auto put = [&](uint64_t v, int bytes) {
        for (int i = bytes - 1; i >= 0; i--)
            out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
    };
    put(st.st_dev, 4);
    put(st.st_ino, 4);
    put(st.st_mode, 4);
    put(st.st_nlink, 4);
    put(st.st_uid, 4);
    put(st.st_gid, 4);
    put(st.st_rdev, 4);
    put(static_cast<uint64_t>(st.st_size), 8);
    put(static_cast<uint64_t>(st.st_blksize), 8);
    put(static_cast<uint64_t>(st.st_blocks), 8);
    put(static_cast<uint64_t>(st.st_atime), 4);
    put(static_cast<uint64_t>(st.st_mtime), 4);
    put(static_cast<uint64_t>(st.st_ctime), 4);
    return out;
}

// The program interpreter an ELF executable names (PT_INTERP), if any.
std::string elf_interpreter(const UniqueFd& fd)
{
    Elf64_Ehdr eh{};
    if (!fd || ::pread(fd.get(), &eh, sizeof(eh), 0) != sizeof(eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
        return "";
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph{};
        if (::pread(fd.get(), &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
            return "";
        if (ph.p_type != PT_INTERP || ph.p_filesz == 0 || ph.p_filesz > 4096)
            continue;
        std::string path(ph.p_filesz, '\0');
        if (::pread(fd.get(), path.data(), path.size(), static_cast<off_t>(ph.p_offset)) !=
            static_cast<ssize_t>(path.size()))
            return "";
        return path.substr(0, path.find('\0'));
    }
    return "";
}

// The name a shared library gives itself (DT_SONAME), by which the dynamic
// loader found it: usually a link to the file (libz.so.1 -> libz.so.1.2.13).
std::string elf_soname(const UniqueFd& fd)
{
    if (!fd || elf_version(EV_CURRENT) == EV_NONE)
        return "";
    Elf* elf = elf_begin(fd.get(), ELF_C_READ_MMAP, nullptr);
    if (!elf)
        return "";
    std::string soname;
    for (Elf_Scn* scn = nullptr; soname.empty() && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
            continue;
        Elf_Data* data = elf_getdata(scn, nullptr);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Dyn dyn;
            if (gelf_getdyn(data, static_cast<int>(i), &dyn) && dyn.d_tag == DT_SONAME) {
                const char* name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
                soname = name ? name : "";
                break;
            }
        }
    }
    elf_end(elf);
    // A name, not a path.
    return soname.find('/') == std::string::npos ? soname : "";
}

// The GNU build ID of an ELF file, in hex ("" if it has none).
std::string elf_build_id(const UniqueFd& fd)
{
    Elf64_Ehdr eh{};
    if (!fd || ::pread(fd.get(), &eh, sizeof(eh), 0) != sizeof(eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum > 256)
        return "";
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        Elf64_Phdr ph{};
        if (::pread(fd.get(), &ph, sizeof(ph), static_cast<off_t>(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
            return "";
        if (ph.p_type != PT_NOTE || ph.p_filesz > 65536)
            continue;
        std::vector<uint8_t> notes(ph.p_filesz);
        if (::pread(fd.get(), notes.data(), notes.size(), static_cast<off_t>(ph.p_offset)) !=
            static_cast<ssize_t>(notes.size()))
            return "";
        for (size_t at = 0; at + sizeof(Elf64_Nhdr) <= notes.size();) {
            Elf64_Nhdr nh;
            std::memcpy(&nh, notes.data() + at, sizeof nh);
            size_t name_at = at + sizeof nh, desc_at = name_at + ((nh.n_namesz + 3) & ~3u);
            size_t next = desc_at + ((nh.n_descsz + 3) & ~3u);
            if (next > notes.size())
                break;
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                std::memcmp(notes.data() + name_at, "GNU", 4) == 0) {
                std::string id;
                char byte[3];
                for (size_t k = 0; k < nh.n_descsz; k++) {
                    std::snprintf(byte, sizeof byte, "%02x", notes[desc_at + k]);
                    id += byte;
                }
                return id;
            }
            at = next;
        }
    }
    return "";
}

// The path a successful open/openat was given, from its recorded input.
std::string opened_path(const SyscallEvent& s)
{
    uint64_t addr = s.nr == SYS_open ? s.args[0] : s.nr == SYS_openat ? s.args[1] : 0;
    if (!addr || s.ret < 0)
        return "";
    for (const auto& m : s.memory)
        if (m.dir == Direction::In && m.addr == addr && !m.bytes.empty())
            return std::string(m.bytes.begin(), std::find(m.bytes.begin(), m.bytes.end(), uint8_t(0)));
    return "";
}

} // namespace

void HostFiles::index() const
{
    if (std::exchange(indexed_, true))
        return;
    const Trace& trace = trace_;
    // Every file the program mapped, as it was named then.
    std::map<std::string, int> names;
    auto add = [&](const std::string& raw, const std::string& hash) {
        if (hash.empty() || raw.empty() || raw[0] != '/')
            return;
        std::string path = strip_deleted(raw);
        std::string copy = trace.file_copy(hash).string();
        copies_[path] = copy;
        copies_[canonical(path)] = copy;
        std::string name = std::filesystem::path(path).filename().string();
        if (by_name_.count(name) && by_name_[name] != copy)
            names[name]++;
        by_name_[name] = copy;
    };
    // The names the program used for them (the dynamic linker's list of
    // libraries holds these), when they lead to a mapped file.
    std::vector<std::string> aliases;
    // As stored: the bytes of reads recorded by reference to a file copy
    // are not needed here (a pread each, on a read-heavy trace most of
    // the scan), only paths, which are stored inline.
    // An attached trace: the files its process had mapped when rewind came.
    if (const auto& attached = trace.meta().attached) {
        // The names its loader used for them are not in the trace (it
        // opened them before): those through the links of a merged /usr
        // (/lib -> usr/lib) are the likely ones.
        std::vector<std::pair<std::string, std::string>> root_links;
        std::error_code ec;
        for (const auto& e : std::filesystem::directory_iterator("/", ec))
            if (e.is_symlink(ec))
                root_links.push_back(
                    {e.path().string(), (std::filesystem::path("/") / std::filesystem::read_symlink(e.path(), ec))
                                            .lexically_normal()
                                            .string()});
        auto add_process = [&](const std::vector<Mapping>& mappings, const std::string& executable) {
            std::set<std::string> seen;
            for (const auto& m : mappings) {
                add(m.path, m.content_hash);
                if (m.content_hash.empty() || !seen.insert(m.path).second)
                    continue;
                std::vector<std::string> names{m.path};
                // The loader's name for a library is its soname in the
                // same directory (the link ld.so.cache lists).
                auto copy = copies_.find(strip_deleted(m.path));
                if (std::string soname = copy == copies_.end() ? "" : elf_soname(open_copy(copy->second));
                    !soname.empty())
                    names.push_back((std::filesystem::path(m.path).parent_path() / soname).string());
                // (Named for the copy itself: the host may not have these links.)
                auto alias = [&](const std::string& name) {
                    if (copy != copies_.end())
                        copies_.emplace(name, copy->second);
                };
                for (const auto& name : names) {
                    alias(name);
                    for (const auto& [link, target] : root_links)
                        if (name.rfind(target + "/", 0) == 0)
                            alias(link + name.substr(target.size()));
                }
            }
            if (std::string copy = copy_of(executable); !copy.empty())
                aliases.push_back(elf_interpreter(open_copy(copy)));
        };
        add_process(attached->mappings, attached->executable);
        for (const auto& d : attached->descendants)
            add_process(d.mappings, d.executable);
    }
    EventStreamReader reader = trace.events_as_stored();
    Event e;
    while (reader.next(e)) {
        if (const auto* x = std::get_if<ExecEvent>(&e)) {
            for (const auto& m : x->mappings)
                add(m.path, m.content_hash);
            aliases.push_back(x->filename);
            if (std::string copy = copy_of(x->executable); !copy.empty())
                aliases.push_back(elf_interpreter(open_copy(copy)));
        } else if (const auto* s = std::get_if<SyscallEvent>(&e)) {
            if (s->file)
                add(s->file->path, s->file->content_hash);
            if (std::string path = opened_path(*s); !path.empty())
                aliases.push_back(std::move(path));
        }
    }
    for (const auto& alias : aliases) {
        if (alias.empty() || alias[0] != '/' || copies_.count(alias))
            continue;
        if (auto it = copies_.find(canonical(alias)); it != copies_.end())
            copies_[alias] = it->second;
    }
    for (const auto& [name, conflicts] : names)
        by_name_.erase(name);
    // Where gdb looks for their separate debug info.
    for (const auto& [path, copy] : copies_) {
        debug_files_.insert("/usr/lib/debug" + path + ".debug");
        if (std::string id = elf_build_id(open_copy(copy)); id.size() > 2)
            debug_files_.insert("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug");
    }
}

UniqueFd HostFiles::open_copy(const std::string& copy) const
{
    std::string why;
    try {
        return trace_.open_verified_file_copy(std::filesystem::path(copy).filename().string(), why);
    } catch (const FormatError&) {
        return {};
    }
}

std::string HostFiles::copy_of(const std::string& path) const
{
    index();
    if (auto it = copies_.find(path); it != copies_.end())
        return it->second;
    if (auto it = copies_.find(canonical(path)); it != copies_.end())
        return it->second;
    return "";
}

std::string HostFiles::handle(const std::string& packet)
{
    std::string body = packet.substr(std::strlen("vFile:"));
    std::string op = body.substr(0, body.find(':'));
    std::string args = body.find(':') == std::string::npos ? "" : body.substr(body.find(':') + 1);
    auto parts = split(args, ',');
    if (op == "setfs")
        return "F0";
    if (op == "open") {
        if (parts.size() < 2)
            return error_reply(EINVAL);
        std::string path = packet_hex_bytes(parts[0], "vFile:open's file name");
        uint64_t flags = packet_hex_number(parts[1], "vFile:open's flags", UINT32_MAX);
        if ((flags & 3) != 0) // gdb's O_WRONLY / O_RDWR: nothing here is writable
            return error_reply(EACCES);
        std::string source = copy_of(path);
        UniqueFd fd;
        if (!source.empty()) {
            // gdb must not read altered code as the recorded program's, nor
            // whatever a link in the trace leads to.
            std::string why;
            try {
                fd = trace_.open_verified_file_copy(std::filesystem::path(source).filename().string(), why);
            } catch (const FormatError& e) {
                why = e.what();
            }
            if (!fd) {
                std::fprintf(stderr, "rewind: not serving %s: %s\n", path.c_str(), why.c_str());
                return error_reply(EIO);
            }
        } else if (debug_files_.count(std::filesystem::path(path).lexically_normal().string())) {
            // The separate debug info of a file of the trace: the host's.
            fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
            if (!fd)
                return error_reply(errno);
        } else {
            return error_reply(ENOENT); // not a file of the recording
        }
        int id = next_fd_++;
        open_[id] = std::move(fd);
        char buf[32];
        std::snprintf(buf, sizeof(buf), "F%x", id);
        return buf;
    }
    if (op == "pread" || op == "close" || op == "fstat") {
        uint64_t id = parts.empty() ? UINT64_MAX : packet_hex_number(parts[0], "vFile:" + op + "'s file descriptor");
        auto it = open_.find(id);
        if (it == open_.end())
            return error_reply(EBADF);
        if (op == "close") {
            open_.erase(it);
            return "F0";
        }
        if (op == "fstat") {
            struct stat st {};
            if (::fstat(it->second.get(), &st) != 0)
                return error_reply(errno);
            std::string data = fio_stat(st);
            char head[32];
            std::snprintf(head, sizeof(head), "F%zx;", data.size());
            return head + GdbConnection::escape(data);
        }
        if (parts.size() < 3)
            return error_reply(EINVAL);
        size_t count = std::min<uint64_t>(packet_hex_number(parts[1], "vFile:pread's count"), 16384);
        off_t offset = static_cast<off_t>(packet_hex_number(parts[2], "vFile:pread's offset", INT64_MAX));
        std::string data(count, '\0');
        ssize_t n = ::pread(it->second.get(), data.data(), count, offset);
        if (n < 0)
            return error_reply(errno);
        data.resize(static_cast<size_t>(n));
        char head[32];
        std::snprintf(head, sizeof(head), "F%zx;", data.size());
        return head + GdbConnection::escape(data);
    }
    if (op == "readlink")
        return error_reply(EINVAL); // the program's paths are served as files
    return "";
}

} // namespace rw::replay
